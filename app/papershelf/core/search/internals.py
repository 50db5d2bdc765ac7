"""Every use of Whoosh's internals, and the check that they are as expected.

Two things here read or drive Whoosh below its public API, for speed:

- the fast path of searching reads a segment's files directly: posting
  blocks (Whoosh's own format: pickled tuples of id deltas, weights and
  encoded positions), the field-length columns and the deleted-document
  set, into numpy arrays (`read_postings`, `read_positions`, `read_lengths`,
  `deleted_docs`); `evaluator.py` scores them with Whoosh's BM25F (`bm25`);
- writing: a segment writer that keeps field lengths in memory while it
  writes postings (`segment_writer`), the rebuild's workers' segments
  finished and listed in one table of contents (`finish_segment`,
  `commit_segments`), and the segments a table of contents lists
  (`live_segment_ids`).

None of this is promised by Whoosh (whoosh-reloaded 2.7.x, pinned in
pyproject.toml). So before any of it is used in a process, a known-answer
probe builds a small index in memory the way a rebuild and an edit do
(segments of worker-style writers, small posting blocks, a deletion) and
checks that what the fast path reads (postings, weights, positions,
lengths, deletions, segments) and the BM25F scores it computes equal
Whoosh's own (its public matcher and scorer). If anything differs or
fails, `fast_path_problem()` says why, one warning is logged, and every
caller takes the public road instead: searches use Whoosh's matcher and
scorer (same results and scores, slower), writers are Whoosh's stock ones
and rebuilds run in-process. A Whoosh update then costs speed, never results.
"""

from __future__ import annotations

import itertools
import logging
import math
import pickle
import threading
import zlib
from typing import Any

import numpy as np
import numpy.typing as npt
from whoosh.codec.whoosh3 import LENGTHS_COLUMN, W3Codec, W3LeafMatcher, _lenfield
from whoosh.fields import Schema
from whoosh.filedb.filestore import RamStorage
from whoosh.scoring import BM25F
from whoosh.util.numeric import byte_to_length
from whoosh.writing import SegmentWriter

from .schema import FIELD_BOOSTS, make_schema

log = logging.getLogger(__name__)

B = 0.75  # Whoosh's BM25F defaults
K1 = 1.2

Ids = npt.NDArray[np.int64]
Floats = npt.NDArray[np.floating[Any]]

_LENGTH_TABLE = np.array([byte_to_length(i) for i in range(256)], dtype=np.float32)
_EMPTY_IDS: Ids = np.zeros(0, dtype=np.int64)


# ---- scoring (Whoosh's formulas, vectorised) ---------------------------------


def idf(doc_count_all: int, doc_frequency: int) -> float:
    """Whoosh's BM25F idf: log(N / (df + 1)) + 1, deleted documents counted in both."""
    return math.log(doc_count_all / (doc_frequency + 1)) + 1


def bm25(term_idf: float, boost: float, field_boost: float, tf: Floats, dl: Floats, avgdl: float) -> Floats:
    """Whoosh's BM25F score of one term in many documents, times the query's
    `boost` and the `field_boost`. `tf` are the posting weights (Whoosh's term
    frequency, which already counts the field boost once), `dl` the documents'
    lengths in the field."""
    tf64 = tf.astype(np.float64)
    norm = K1 * ((1 - B) + B * dl / avgdl)
    return (term_idf * boost * field_boost) * (tf64 * (K1 + 1)) / (tf64 + norm)


# ---- reading a segment's files -----------------------------------------------


def read_postings(reader: Any, field: str, tbytes: bytes) -> tuple[Ids, npt.NDArray[np.float32]]:
    """(segment-local ids, weights) of one term in one segment reader, deleted documents included."""
    if (field, tbytes) not in reader:
        return _EMPTY_IDS, np.zeros(0, dtype=np.float32)
    m = reader._terms.matcher(field, tbytes, reader.schema[field].format)
    if not isinstance(m, W3LeafMatcher):  # few postings, kept inline in the term info
        ids = np.fromiter(m.all_ids(), dtype=np.int64)
        weights = np.ones(len(ids), dtype=np.float32)
        if hasattr(m, "_weights") and m._weights is not None:
            weights = np.asarray(m._weights, dtype=np.float32)
        return ids, weights
    id_parts, weight_parts = [], []
    postfile = m._postfile
    while True:
        raw = postfile.get(m._dataoffset, m._nextoffset - m._dataoffset)
        if m._compression:
            raw = zlib.decompress(raw)
        deltas, weights = pickle.loads(raw)[:2]
        block_ids = np.cumsum(np.array(deltas, dtype=np.int64))
        id_parts.append(block_ids)
        n = len(block_ids)
        if weights is None:
            weight_parts.append(np.ones(n, dtype=np.float32))
        elif isinstance(weights, float):
            weight_parts.append(np.full(n, weights, dtype=np.float32))
        else:
            weight_parts.append(np.array(weights, dtype=np.float32))
        if m._lastblock:
            break
        m._goto(m._nextoffset)
    return np.concatenate(id_parts), np.concatenate(weight_parts)


def read_positions(reader: Any, field: str, tbytes: bytes, docs: Ids) -> list[list[int]]:
    """The positions of a term in each of `docs` (segment-local, sorted, all
    holding the term), as lists (`read_all_positions` gives every posting's as arrays)."""
    ids, offsets, flat = read_all_positions(reader, field, tbytes)
    js = np.searchsorted(ids, docs)
    found = ids[np.minimum(js, len(ids) - 1)] == docs if len(ids) else np.zeros(len(docs), dtype=bool)
    return [
        flat[offsets[j] : offsets[j + 1]].tolist() if ok else []
        for j, ok in zip(js.tolist(), found.tolist(), strict=True)
    ]


Positions = tuple[Ids, Ids, npt.NDArray[np.int32]]  # ids, offsets (one more than ids), flat positions


def read_all_positions(reader: Any, field: str, tbytes: bytes) -> Positions:
    """Every posting of a term in one segment with its positions, deleted documents
    included: (segment-local ids, offsets, flat positions); posting k's positions are
    flat[offsets[k]:offsets[k + 1]], ascending. One pass over the posting blocks; the
    positions are decoded for all postings at once (`decode_positions`)."""
    fmt = reader.schema[field].format
    if (field, tbytes) not in reader:
        return _EMPTY_IDS, np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32)
    m = reader._terms.matcher(field, tbytes, fmt)
    if not isinstance(m, W3LeafMatcher):  # few postings, kept inline in the term info
        ids = np.fromiter(m.all_ids(), dtype=np.int64)
        values = list(m._values) if getattr(m, "_values", None) is not None else [b""] * len(ids)
        return (ids, *decode_positions(values))
    id_parts, values = [], []
    postfile = m._postfile
    while True:
        raw = postfile.get(m._dataoffset, m._nextoffset - m._dataoffset)
        if m._compression:
            raw = zlib.decompress(raw)
        data = pickle.loads(raw)
        id_parts.append(np.cumsum(np.array(data[0], dtype=np.int64)))
        values.extend(data[2])
        if m._lastblock:
            break
        m._goto(m._nextoffset)
    return (np.concatenate(id_parts), *decode_positions(values))


# Whoosh's Positions value: a 4-byte big-endian count, then pickle.dumps(deltas, 2)
# (the final STOP sometimes left off). Lists of small deltas pickle the same way every
# time: header, then one BININT1 ("K", one byte) per delta: read those with numpy.
_PICKLE_HEAD = np.frombuffer(b"\x80\x02]q\x00", dtype=np.uint8)
_BININT1 = ord("K")


def decode_positions(values: list[bytes]) -> tuple[Ids, npt.NDArray[np.int32]]:
    """(offsets, flat positions) of many Positions values: value k's positions are
    flat[offsets[k]:offsets[k + 1]]. The usual form (every delta below 256) is read
    with array operations; any other value is unpickled as Whoosh does."""
    n = len(values)
    buf = np.frombuffer(b"".join(values), dtype=np.uint8)
    lens = np.fromiter(map(len, values), dtype=np.int64, count=n)
    usual, counts, owner, within, delta_at = _usual_values(buf, lens)
    sizes = np.where(usual, counts, 0)
    decoded = {k: _decode_positions(values[k]) if values[k] else [] for k in np.flatnonzero(~usual).tolist()}
    for k, poses in decoded.items():
        sizes[k] = len(poses)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    deltas = np.zeros(int(offsets[-1]), dtype=np.int64)
    deltas[offsets[owner] + within] = buf[delta_at]
    # positions are the running sums of the deltas within each value
    sums = np.cumsum(deltas)
    filled = sizes > 0
    before = np.concatenate(([0], sums))[offsets[:-1][filled]]
    flat = (sums - np.repeat(before, sizes[filled])).astype(np.int32)
    for k, poses in decoded.items():
        flat[offsets[k] : offsets[k + 1]] = poses
    return offsets, flat


def _usual_values(buf: npt.NDArray[np.uint8], lens: Ids) -> tuple[npt.NDArray[np.bool_], Ids, Ids, Ids, Ids]:
    """Which values have the usual form (header, then K and one byte per delta), their
    counts, and for each delta of those: its value, its place in it, where its byte is."""
    n = len(lens)
    starts = np.zeros(n, dtype=np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    head = len(_PICKLE_HEAD)
    usual = lens >= 4 + head + 3
    s = np.where(usual, starts, 0)
    counts = np.zeros(n, dtype=np.int64)
    if usual.any():
        for k in range(4):  # the count, big-endian
            counts = (counts << 8) | buf[s + k]
        body = lens - 4 - head
        expected = np.where(counts == 1, 3, 2 * counts + 2)  # K d APPEND, or MARK (K d)... APPENDS
        usual &= (counts >= 1) & ((body == expected) | (body == expected + 1))
        for k, byte in enumerate(_PICKLE_HEAD.tolist()):
            usual &= buf[np.where(usual, s + 4 + k, 0)] == byte
    counts = np.where(usual, counts, 0)
    owner = np.repeat(np.arange(n), counts)
    within = np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
    ops = (s + 4 + head + (counts > 1))[owner] + 2 * within  # each K
    bad = owner[buf[ops] != _BININT1]
    if len(bad):
        usual[bad] = False
        keep = usual[owner]
        owner, within, ops = owner[keep], within[keep], ops[keep]
    return usual, counts, owner, within, ops + 1


def _decode_positions(value: bytes) -> list[int]:
    """Whoosh's Positions format: a 4-byte count, then the pickled position deltas."""
    return list(itertools.accumulate(pickle.loads(value[4:] if value.endswith(b".") else value[4:] + b".")))


def read_lengths(reader: Any, field: str, count: int) -> npt.NDArray[np.float32]:
    """Each document's length in `field` (words), as Whoosh recorded it (a byte code per document)."""
    arr = np.zeros(count, dtype=np.float32)
    col = reader._perdoc._cached_reader(_lenfield(field), LENGTHS_COLUMN)
    if col is not None:
        raw = col._dbfile.get(col._basepos, col._count * col._fixedlen)
        codes = np.frombuffer(raw, dtype=np.uint8)[:count]
        arr[: len(codes)] = _LENGTH_TABLE[codes]
    return arr


def deleted_docs(reader: Any) -> Ids:
    """The segment-local numbers of a segment reader's deleted documents."""
    return np.fromiter(reader._perdoc.deleted_docs(), dtype=np.int64)


# ---- writing -------------------------------------------------------------------


class _Lengths:
    """A per-document reader that answers field lengths from memory: stock
    Whoosh reads each one from the column file while it writes postings."""

    _table = [None] + [byte_to_length(b) for b in range(1, 256)]

    def __init__(self, pdr: Any) -> None:
        self._pdr = pdr
        self._fields: dict[str, bytes] = {}

    def doc_field_length(self, docnum: int, fieldname: str, default: int = 0) -> Any:
        """The length code's value, as Whoosh's reader gives it."""
        raw = self._fields.get(fieldname)
        if raw is None:
            col = self._pdr._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN)
            raw = b"" if col is None else col._dbfile.get(col._basepos, col._count * col._fixedlen)
            self._fields[fieldname] = raw
        return self._table[raw[docnum]] if docnum < len(raw) else None

    def close(self) -> None:
        """Close the wrapped reader."""
        self._pdr.close()


class _TunedWriter(SegmentWriter):  # type: ignore[misc]   # Whoosh has no type information
    def per_document_reader(self) -> _Lengths:
        return _Lengths(super().per_document_reader())


def segment_writer(ix: Any, tuned: bool | None = None, **kwargs: Any) -> Any:
    """A Whoosh SegmentWriter that writes plain (not compound) segments; if
    `tuned` (by default: if the probe passed), one that looks up field
    lengths in memory while it writes postings (stock Whoosh reads each one
    from the column file: a fifth of the time of a commit)."""
    # Separate files, not one compound file: Whoosh reads a compound segment's
    # postings whole into memory (210 MB of a 100,000-paper index), while
    # separate files are memory-mapped and read as needed.
    kwargs.setdefault("compound", False)
    return (_TunedWriter if (usable() if tuned is None else tuned) else SegmentWriter)(ix, **kwargs)


def finish_segment(writer: Any) -> Any:
    """Write out a rebuild worker's segment without committing it (the parent lists it)."""
    return writer._finalize_segment()


def publish_segments(ix: Any, segments: list[Any]) -> None:
    """List `segments` (some of a rebuild's, in the library's order) in a new table of contents of the
    index being built, for searches while the rest is written. Unlike a commit, no file is removed
    (workers are writing segments not listed yet); the final `commit_segments` removes the old tables."""
    from whoosh.index import TOC

    TOC(ix.schema, segments, ix.latest_generation() + 1).write(ix.storage, ix.indexname)


def commit_segments(ix: Any, segments: list[Any]) -> None:
    """Make `segments` (finished by rebuild workers, in this order) the index's contents."""
    writer = SegmentWriter(ix, limitmb=8)
    try:
        writer._close_segment()
        writer._commit_toc(segments)
    finally:
        writer._finish()


def fast_writing() -> bool:
    """Whether a rebuild may write its segments with `fastwrite.write_segment`: the probe passed, and
    `fastwrite`'s own probe (a segment written by it and one by Whoosh's stock writer, of documents
    using every field of the schema, read back the same) passed in this process."""
    global _fastwrite_verdict
    if not usable():
        return False
    with _probe_lock:
        if _fastwrite_verdict is None:
            try:
                _fastwrite_verdict = _probe_fastwrite()
            except Exception as exc:  # any failure of the internals is a mismatch
                _fastwrite_verdict = f"the probe failed ({exc.__class__.__name__}: {exc})"
            if _fastwrite_verdict:
                log.warning(
                    "Whoosh's segment files are not as Papershelf's fast writer expects (%s): "
                    "rebuilds use Whoosh's stock writer (slower)",
                    _fastwrite_verdict,
                )
        return not _fastwrite_verdict


def _probe_fastwrite() -> str:
    """Write the same documents with `fastwrite` and with Whoosh's writer (blocks of two postings,
    so terms span several) and compare everything Whoosh reads of the two segments."""
    from . import fastwrite

    schema = make_schema()
    problem = fastwrite.supported(schema, W3Codec())
    if problem:
        return problem
    ix = _MemoryOnly().create_index(schema)
    codec = W3Codec(blocklimit=2)
    stock = SegmentWriter(ix, _lk=False, codec=codec, compound=False)
    for doc in _PROBE_FULL_DOCS:
        stock.add_document(**doc)
    theirs = fastwrite.segment_contents(ix.storage, finish_segment(stock), schema)
    ours = fastwrite.segment_contents(ix.storage, fastwrite.write_segment(ix, _PROBE_FULL_DOCS, codec=codec), schema)
    different = fastwrite.differences(ours, theirs)
    if different:
        return f"the fast writer's segment differs ({', '.join(different)})"
    return "" if len(ours) > 60 else "too few terms to compare"


def parallel_build() -> bool:
    """Whether a rebuild may be split over worker processes (it needs `finish_segment`/`commit_segments`)."""
    return usable()


def live_segment_ids(ix: Any) -> set[str]:
    """The ids of the segments the index's current table of contents lists."""
    if usable():
        return _toc_segment_ids(ix)
    return _reader_segment_ids(ix)


def _toc_segment_ids(ix: Any) -> set[str]:
    return {seg.segment_id() for seg in ix._segments()}


def _reader_segment_ids(ix: Any) -> set[str]:
    with ix.reader() as reader:  # the public road: opens every segment
        return {r.segment().segment_id() for r, _ in reader.leaf_readers()}


# ---- the known-answer probe ----------------------------------------------------

_verdict: str | None = None  # None: not probed yet; "": the internals are as expected; else why not
_fastwrite_verdict: str | None = None  # the same, for `fastwrite` (probed when a rebuild first asks)
_probe_lock = threading.Lock()
_start_lock = threading.Lock()
_probe_thread: threading.Thread | None = None


def fast_path_problem() -> str:
    """ "" if Whoosh's internals are as this module expects, else why not.

    The probe runs once per process (about 20 ms; a caller that comes while
    it runs waits for it); a failure is logged once, and every caller then
    takes Whoosh's public road."""
    global _verdict
    with _probe_lock:
        if _verdict is None:
            try:
                _verdict = _probe()
            except Exception as exc:  # any failure of the internals is a mismatch
                _verdict = f"the probe failed ({exc.__class__.__name__}: {exc})"
            if _verdict:
                log.warning(
                    "Whoosh's internals are not as Papershelf expects (%s): searching uses "
                    "Whoosh's own matcher and scorer, and indexing its stock writer (slower)",
                    _verdict,
                )
        return _verdict


def start_probe() -> None:
    """Run the probe on a thread of its own, if it has not run in this process
    (`SearchIndex.open` calls this once the index is open); whoever needs the
    verdict first waits for it."""
    global _probe_thread
    with _start_lock:
        if _verdict is None and _probe_thread is None:
            _probe_thread = threading.Thread(target=fast_path_problem, name="papershelf-whoosh-probe", daemon=True)
            _probe_thread.start()


def usable() -> bool:
    """Whether the fast path (and the tuned writers) may be used in this process."""
    verdict = _verdict
    return not (fast_path_problem() if verdict is None else verdict)


# Papers whose words repeat within and across documents, so that with blocks of
# two postings most terms span several blocks in a segment.
_PROBE_DOCS = [
    {"id": f"p{n}", "title": title, "abstract": abstract, "tags": tags}
    for n, (title, abstract, tags) in enumerate(
        [
            ("Alpha beta", "alpha models of alpha beta gamma", "llm,rl"),
            ("Beta gamma", "beta beta models models models", "llm"),
            ("Alpha", "gamma alpha models of everything", ""),
            ("Gamma models", "alpha alpha alpha alpha models beta", "rl"),
            ("Alpha beta gamma", "models", "rl,llm"),
            ("Models of alpha", "gamma gamma alpha beta models", "llm"),
        ]
    )
]
# Every kind of field of the index's schema (text with positions, text without, names, IDs,
# keywords, a number, columns, a stored field), words repeated in and across documents, a
# word at a position past the encoder's table, accents, a stop word, a long value and short
# values that repeat (cached by text).
_PROBE_FULL_DOCS = [
    {
        "id": f"p{n}",
        "title": title,
        "authors": authors,
        "abstract": abstract + (" filler" * 4100 + " omega" if n == 2 else ""),
        "area": "Machine Learning Theory" if n % 2 else "Vision",
        "area_exact": "ml" if n % 2 else "vision",
        "venue": "Proc. ICML" if n % 3 else "Schrödinger's Journal",
        "keywords": "alpha ; beta" if n % 2 else "",
        "tags": tags,
        "status": "reading" if n % 2 else "unread",
        "lists": "reading group" if n == 3 else "",
        "source": "listing_000.txt bibtex",
        "added": f"2026-12-0{n + 1}T10:00:00+00:00",
        "title_sort": title.lower(),
        "digest": f"{n:016x}",
        "fulltext": abstract * 3 if n % 2 else "",
        "notes": "the alpha note" if n == 4 else "",
        "year": 2000 + n,
    }
    for n, (title, authors, abstract, tags) in enumerate(
        [
            ("Alpha beta", "Ada Lovelace ; Émile Borel", "alpha models of alpha beta gamma", "llm,rl"),
            ("Beta gamma", "Ada Lovelace", "beta beta models models models", "llm"),
            ("Alpha", "Alan Turing", "gamma alpha models of everything", ""),
            ("Gamma models", "Émile Borel ; Alan Turing", "alpha alpha alpha alpha models beta", "rl"),
            ("Alpha beta gamma", "Kurt Gödel", "models", "rl,llm"),
            ("Models of alpha", "Ada Lovelace", "gamma gamma alpha beta models the", "llm"),
        ]
    )
]
_PROBE_FULL_DOCS = [{k: v for k, v in doc.items() if v != ""} for doc in _PROBE_FULL_DOCS]
_PROBE_EDIT = dict(_PROBE_DOCS[1], title="Beta gamma models", abstract="models alpha beta")
_PROBE_FIELDS = ("title", "abstract", "tags", "id")  # positions and lengths; counts; existence


class _MemoryOnly(RamStorage):  # type: ignore[misc]
    """In-memory storage whose temporary storage is in memory too.

    Whoosh's RamStorage puts a writer's temporary files in the system's temp
    folder under a fixed name (`MAIN.tmp`), shared by every process: two
    Papershelf processes probing at once deleted each other's files, and the
    probe failed for no fault of Whoosh's."""

    def temp_storage(self, name: str | None = None) -> RamStorage:
        return RamStorage()


def _probe() -> str:
    """Build the probe index as a rebuild and an edit would, and compare."""
    full = make_schema()  # the index's own field types, those the fast path reads
    ix = _MemoryOnly().create_index(Schema(**{name: full[name] for name in _PROBE_FIELDS}))
    codec = W3Codec(blocklimit=2)  # small blocks: most terms span several
    segments = []
    for part in (_PROBE_DOCS[:4], _PROBE_DOCS[4:]):  # two rebuild workers' segments
        writer = _TunedWriter(ix, _lk=False, codec=codec, compound=False)
        for doc in part:
            writer.add_document(**doc)
        segments.append(finish_segment(writer))
    commit_segments(ix, segments)
    writer = _TunedWriter(ix, codec=codec, compound=False)  # an edit: a deletion and a new segment
    writer.update_document(**_PROBE_EDIT)
    writer.commit(merge=False)
    with ix.searcher() as searcher:
        return _compare(ix, searcher)


def _compare(ix: Any, searcher: Any) -> str:
    reader = searcher.reader()
    leaves = reader.leaf_readers()
    # known answers: three segments, the edited paper's old copy deleted in the first
    if len(leaves) != 3 or searcher.doc_count() != len(_PROBE_DOCS) or searcher.doc_count_all() != len(_PROBE_DOCS) + 1:
        return f"the probe index has {len(leaves)} segments and {searcher.doc_count_all()} documents"
    if _toc_segment_ids(ix) != {r.segment().segment_id() for r, _ in leaves}:
        return "the table of contents lists other segments"
    for segreader, _ in leaves:
        count = segreader.doc_count_all()
        dead = deleted_docs(segreader).tolist()
        if sorted(dead) != [d for d in range(count) if segreader.is_deleted(d)]:
            return "deleted documents differ"
        for field in ("title", "abstract"):
            lengths = read_lengths(segreader, field, count).tolist()
            if lengths != [float(segreader.doc_field_length(d, field, 0)) for d in range(count)]:
                return f"field lengths differ ({field})"
        for field, terms in (("title", None), ("abstract", None), ("tags", None), ("id", 1)):
            for tbytes in itertools.islice(segreader.lexicon(field), terms):
                problem = _compare_postings(segreader, field, tbytes, set(dead))
                if problem:
                    return problem
    # known answer: "alpha" in titles (weight 3 per occurrence, the field boost)
    ids, weights = read_postings(leaves[0][0], "title", b"alpha")
    if ids.tolist() != [0, 2] or weights.tolist() != [3.0, 3.0]:
        return "the postings of a known term differ"
    return _compare_scores(searcher, leaves)


def _compare_scores(searcher: Any, leaves: list[tuple[Any, int]]) -> str:
    """Our BM25F against Whoosh's scorer, for words in several papers and segments."""
    size = searcher.doc_count_all()
    weighting = BM25F(B=B, K1=K1)
    compared = 0
    for field in ("title", "abstract"):
        avgdl = searcher.avg_field_length(field) or 1.0
        boost = FIELD_BOOSTS.get(field, 1.0)
        lengths = [read_lengths(r, field, r.doc_count_all()) for r, _ in leaves]
        for tbytes in (b"alpha", b"beta", b"model"):
            parts = [(read_postings(r, field, tbytes), lengths[k], offset) for k, (r, offset) in enumerate(leaves)]
            ids = np.concatenate([p[0] + offset for (p, _, offset) in parts])
            tf = np.concatenate([p[1] for (p, _, _) in parts])
            dl = np.concatenate([segment_lengths[p[0]] for (p, segment_lengths, _) in parts])
            ours = dict(zip(ids.tolist(), bm25(idf(size, len(ids)), 1.0, boost, tf, dl, avgdl).tolist(), strict=True))
            m = searcher.postings(field, tbytes, weighting=weighting)
            while m.is_active():
                theirs = m.score() * boost
                if not math.isclose(ours.get(m.id(), math.nan), theirs, rel_tol=1e-5):
                    return f"BM25F scores differ ({field}:{tbytes!r}: {ours.get(m.id())} against {theirs})"
                compared += 1
                m.next()
    return "" if compared >= 20 else "too few scores to compare"


def _compare_postings(segreader: Any, field: str, tbytes: bytes, dead: set[int]) -> str:
    ids, weights = read_postings(segreader, field, tbytes)
    live = [(i, w) for i, w in zip(ids.tolist(), weights.tolist(), strict=True) if i not in dead]
    m = segreader.postings(field, tbytes)
    public = []
    positions = []
    has_positions = segreader.schema[field].format.supports("positions")
    while m.is_active():
        public.append((m.id(), m.weight()))
        if has_positions:
            positions.append(m.value_as("positions"))
        m.next()
    if live != public:
        return f"postings differ ({field}:{tbytes!r})"
    if has_positions:
        docs = np.array([i for i, _ in live], dtype=np.int64)
        if read_positions(segreader, field, tbytes, docs) != positions:
            return f"positions differ ({field}:{tbytes!r})"
    return ""
