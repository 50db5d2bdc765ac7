"""Writing a whole segment of new documents at once, in Whoosh's own format.

Whoosh's `SegmentWriter` spends most of a rebuild in Python per posting:
`add_document` hands every (field, term, document) to a `SortingPool` (a
tuple, a size estimate, a pickle when a run spills to disk), and the commit
merges the sorted runs back and feeds them one at a time through
`add_postings` → `W3PostingsWriter.add_posting` (type checks, per-posting
statistics) and a field-length lookup. At 100,000 papers that is ~15
million Python calls for ~15 million postings.

`write_segment` writes the same segment files for a whole batch of new
documents at once:

- the analysis of a text field is one pass over the words (the analyzer's
  cached `_normal`, a term's UTF-8 bytes cached with it), positions grouped
  per term in a dict; a term found once in a document (most) takes its
  encoded positions from a table; the whole output of short values that
  repeat (venues, areas, keywords, author lists) is cached by text;
- postings are gathered per term in three lists (documents, weights,
  values), in document order, so nothing is sorted but the terms;
- each posting block (128 postings) is pickled, compressed and described
  exactly as `W3PostingsWriter._write_block` does, and each term's
  statistics are Whoosh's own `W3TermInfo.add_block`, from a stand-in for
  the block;
- stored fields, length columns and value columns go through Whoosh's own
  per-document writer, one call per field.

The files are meant to be byte for byte those Whoosh's stock writer writes
for the same documents (`tests/test_fastwrite.py` compares every file of
both, and the search results and scores); `internals.py`'s probe checks it
once per process (`write_segment` against a stock writer) and, if anything
differs, rebuilds fall back to Whoosh's writer. Only new segments of new
documents: edits (deletions, updates) stay with Whoosh's writer.
"""

from __future__ import annotations

import pickle
import zlib
from array import array
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from whoosh import formats
from whoosh.analysis import IDTokenizer
from whoosh.codec.whoosh3 import WHOOSH3_HEADER_MAGIC, W3Codec, W3TermInfo
from whoosh.system import pack_uint, pack_ushort
from whoosh.util.numeric import byte_to_length, length_to_byte

from .schema import WORD_RE, PaperAnalyzer

Every = Callable[[int], bool]  # called with the number of documents analysed so far; False: stop (cancelled)

_SHORT = 160  # values up to this long are cached whole by text (they repeat: venues, areas, names)
_CACHE_MAX = 200_000
_SINGLE = [pack_uint(1) + pickle.dumps([p], 2) for p in range(4096)]  # one position p, encoded
# Whoosh compresses every block (it meant to skip pickles under 20 bytes: a bug in `_write_block`);
# zlib's set-up costs ~45 µs a call whatever the size, and most terms have a block of one or two
# postings, which compression does not shrink. Blocks smaller than this are stored as they are
# (the block's description says so: compression level 0), and read the same.
_COMPRESS_MIN = 256
_QLEN = [0] + [byte_to_length(b) for b in range(1, 256)]  # a length as Whoosh reads it back


_Item = tuple[bytes, int, float, bytes]  # a term in a document: its bytes, frequency, weight, encoded value


class Cancelled(Exception):
    """`every` said stop."""


class _Block:
    """What `W3TermInfo.add_block` reads of a block of postings."""

    __slots__ = ("_maxid", "_maxlength", "_maxweight", "_minid", "_minlength", "_n", "_weights")

    def __init__(self, ids: list[int], weights: list[float], lengths: list[int]) -> None:
        self._weights = array("f", weights)  # as Whoosh keeps them (its statistics sum these)
        self._n = len(ids)
        self._minid = ids[0]
        self._maxid = ids[-1]
        self._minlength = min(lengths) if lengths else None  # lengths: the non-zero ones
        self._maxlength = max(lengths) if lengths else 0
        top = max(weights)
        self._maxweight = top if top > 0 else 0  # Whoosh starts from 0 and keeps the first larger

    def __len__(self) -> int:
        return self._n

    def min_id(self) -> int:
        return self._minid

    def max_id(self) -> int:
        return self._maxid

    def min_length(self) -> int | None:
        return self._minlength

    def max_length(self) -> int:
        return self._maxlength

    def max_weight(self) -> float:
        return self._maxweight


def supported(schema: Any, codec: Any) -> str:
    """ "" if this writer can write segments of `schema` with `codec`, else why not."""
    if type(codec) is not W3Codec or codec._inlinelimit != 1:
        return "another codec"
    for name, field in schema.items():
        if field.vector or field.separate_spelling():
            return f"the field {name} has vectors or a spelling field"
    return ""


class _Analysis:
    """A field's text → (term bytes, frequency, weight, encoded value) items, as `field.index` gives them."""

    def __init__(self, field: Any) -> None:
        self.field = field
        fmt = field.format
        analyzer = field.analyzer if hasattr(field, "analyzer") else None
        self.fast = isinstance(analyzer, PaperAnalyzer) and type(fmt) in (formats.Positions, formats.Frequency)
        self.positions = type(fmt) is formats.Positions
        # an ID field: the whole value is the one term (Whoosh's IDTokenizer, no filters)
        self.whole = type(analyzer) is IDTokenizer and type(fmt) is formats.Existence
        self.boost = fmt.field_boost
        self.analyzer: Any = analyzer
        self.terms: dict[str, bytes] = {}  # a word as written → its term's bytes
        self.stopped: set[str] = set()  # words as written that are stop words
        self.cache: dict[str, list[tuple[bytes, int, float, bytes]]] = {}

    def items(self, value: Any) -> list[tuple[bytes, int, float, bytes]]:
        if not self.fast or not isinstance(value, str):
            if self.whole and value and isinstance(value, str):
                return [(value.encode("utf-8"), 1, self.boost, b"")]
            return list(self.field.index(value))
        short = len(value) <= _SHORT
        if short:
            hit = self.cache.get(value)
            if hit is not None:
                return hit
        out = self._analyse(value)
        if short:
            if len(self.cache) >= _CACHE_MAX:
                self.cache.clear()
            self.cache[value] = out
        return out

    def _analyse(self, value: str) -> list[tuple[bytes, int, float, bytes]]:
        stops = self.analyzer.stops
        terms = self.terms
        stopped = self.stopped
        poses: dict[bytes, list[int]] = {}
        for pos, word in enumerate(WORD_RE.findall(value)):
            term = terms.get(word)
            if term is None:
                if word in stopped:
                    continue
                if word.lower() in stops:
                    stopped.add(word)
                    continue
                if len(terms) > _CACHE_MAX:
                    terms.clear()
                term = terms[word] = self.analyzer._normal(word).encode("utf-8")
            found = poses.get(term)
            if found is None:
                poses[term] = [pos]
            else:
                found.append(pos)
        boost = self.boost
        if not self.positions:
            return [(t, len(p), len(p) * boost, pack_uint(len(p))) for t, p in poses.items()]
        out = []
        for t, p in poses.items():
            n = len(p)
            if n == 1 and p[0] < 4096:
                out.append((t, 1, boost, _SINGLE[p[0]]))
            else:
                out.append((t, n, n * boost, pack_uint(n) + pickle.dumps(_deltas(p), 2)))
        return out


def _deltas(positions: list[int]) -> list[int]:
    return [b - a for a, b in zip([0, *positions], positions, strict=False)]


def write_segment(ix: Any, docs: Iterable[Mapping[str, Any]], every: Every | None = None, codec: Any = None) -> Any:
    """Write `docs` (as `add_document` takes them) as one new, uncommitted segment of `ix`; returns the
    segment (for `internals.commit_segments`). `every` is called every 250 documents with the count so
    far; if it returns False, the segment's files are left unlisted and `Cancelled` is raised."""
    codec = codec or W3Codec()
    storage = ix.storage
    schema = ix.schema
    segment = codec.new_segment(storage, ix.indexname)
    perdoc = codec.per_document_writer(storage, segment)
    postings: dict[str, dict[bytes, tuple[list[int], list[_Item]]]] = {}
    lengths: dict[str, list[int]] = {}
    try:
        count = _add_documents(schema, docs, perdoc, postings, lengths, every)
    except BaseException:
        perdoc._cols._temp.close()  # the columns' temporary file (the folder is the caller's to remove)
        raise
    perdoc.close()
    segment.set_doc_count(count)
    fieldwriter = codec.field_writer(storage, segment)
    try:
        for name in sorted(postings):
            fieldwriter.start_field(name, schema[name])
            qlen = lengths.get(name)
            _write_field(fieldwriter, postings.pop(name), qlen, codec._blocklimit, codec._compression)
            fieldwriter.finish_field()
    finally:
        fieldwriter.close()
    return segment


def _add_documents(
    schema: Any,
    docs: Iterable[Mapping[str, Any]],
    perdoc: Any,
    postings: dict[str, dict[bytes, tuple[list[int], list[_Item]]]],
    lengths: dict[str, list[int]],
    every: Every | None,
) -> int:
    analysis: dict[str, _Analysis] = {}
    for docnum, fields in enumerate(docs):
        if every is not None and docnum % 250 == 0 and docnum and not every(docnum):
            raise Cancelled
        perdoc.start_doc(docnum)
        for name in sorted(n for n in fields if not n.startswith("_")):
            value = fields[name]
            if value is None:
                continue
            field = schema[name]
            length = 0
            if field.indexed:
                a = analysis.get(name)
                if a is None:
                    a = analysis[name] = _Analysis(field)
                terms = postings.get(name)
                if terms is None:
                    terms = postings[name] = {}
                scorable = field.scorable
                for item in a.items(value):
                    if scorable:
                        length += item[1]
                    found = terms.get(item[0])
                    if found is None:
                        terms[item[0]] = ([docnum], [item])
                    else:
                        found[0].append(docnum)
                        found[1].append(item)
            if length:
                column = lengths.get(name)
                if column is None:
                    column = lengths[name] = []
                column.extend([0] * (docnum - len(column)))
                column.append(_QLEN[length_to_byte(length)])
            perdoc.add_field(name, field, value if field.stored else None, length)
            column_type = field.column_type
            if column_type:
                perdoc.add_column_value(name, column_type, field.to_column_value(value))
        perdoc.finish_doc()
    return int(perdoc._doccount)


def _write_field(
    fieldwriter: Any,
    terms: dict[bytes, tuple[list[int], list[_Item]]],
    qlen: list[int] | None,
    blocklimit: int,
    compression: int,
) -> None:
    """Every term's postings of one field, in term order, as `W3FieldWriter` writes them."""
    postfile = fieldwriter._postfile
    tindex = fieldwriter._tindex
    prefix = pack_ushort(fieldwriter._fieldid)
    qlen = qlen or []
    top = len(qlen)
    dumps = pickle.dumps
    compress = zlib.compress
    fixed = fieldwriter._format.fixed_value_size()
    for tbytes in sorted(terms):
        ids, items = terms.pop(tbytes)
        weights = [it[2] for it in items]
        info = W3TermInfo()
        start = postfile.tell()
        postfile.write(WHOOSH3_HEADER_MAGIC)
        n = len(ids)
        for lo in range(0, n, blocklimit):
            hi = min(n, lo + blocklimit)
            bids = ids[lo:hi]
            block = _Block(bids, weights[lo:hi], [qlen[d] for d in bids if d < top and qlen[d]])
            info.add_block(block)
            data = (tuple(_deltas(bids)), _mini_weights(block._weights), _mini_values(items[lo:hi], fixed))
            databytes = dumps(data, 2)
            level = compression if len(databytes) >= _COMPRESS_MIN else 0
            if level:
                databytes = compress(databytes, level)
            described = (hi - lo, bids[-1], block._maxweight, level, length_to_byte(block._minlength))
            infobytes = dumps((*described, length_to_byte(block._maxlength)), 2)
            size = len(infobytes) + len(databytes)
            postfile.write_int(-size if hi == n else size)
            postfile.write(infobytes)
            postfile.write(databytes)
        info.set_extent(start, postfile.tell() - start)
        tindex.add(prefix + tbytes, info.to_bytes())


def _mini_values(items: list[_Item], fixed: int | None) -> Any:
    """`W3PostingsWriter._mini_values` (it keeps only non-empty values)."""
    if fixed is None or fixed < 0:
        return tuple([it[3] for it in items if it[3]])
    if fixed == 0:
        return None
    return b"".join([it[3] for it in items])


def _mini_weights(weights: array[float]) -> Any:
    """`W3PostingsWriter._mini_weights`."""
    first = weights[0]
    if first == 1.0 and all(w == 1.0 for w in weights):
        return None
    if all(w == first for w in weights):
        return first
    return tuple(weights)


# ---- comparing a segment with Whoosh's own ---------------------------------------


def segment_contents(storage: Any, segment: Any, schema: Any) -> dict[str, Any]:
    """Everything Whoosh reads of a segment, file offsets and compression aside: per field and term
    the term's statistics and every block's description and decoded data; the stored fields and
    columns (their files' bytes), the field lengths, the document count."""
    codec = segment.codec()
    terms = codec.terms_reader(storage, segment)
    out: dict[str, Any] = {"docs": segment.doc_count_all(), "fieldlengths": dict(segment._fieldlengths)}
    try:
        for (name, tbytes), info in terms.items():
            stats = (info._weight, info._df, info._minlength, info._maxlength, info._maxweight, info._minid)
            out[f"t:{name}:{tbytes!r}"] = (stats, info._maxid, _blocks(terms, name, tbytes, schema[name].format))
    finally:
        terms.close()
    prefix = segment.make_filename("")
    for fname in storage.list():
        if fname.startswith(prefix) and fname.endswith(".col"):
            with storage.open_file(fname) as f:
                out["c:" + fname.removeprefix(prefix)] = f.read()
    return out


def _blocks(terms: Any, name: str, tbytes: bytes, fmt: Any) -> list[Any]:
    m = terms.matcher(name, tbytes, fmt)
    blocks = []
    while True:
        raw = m._postfile.get(m._dataoffset, m._nextoffset - m._dataoffset)
        data = pickle.loads(zlib.decompress(raw) if m._compression else raw)
        info = (m._blocklength, m._maxid, m._maxweight, m._minlength, m._maxlength)
        blocks.append((info, data))
        if m._lastblock:
            return blocks
        m._goto(m._nextoffset)


def differences(ours: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    """What differs between two `segment_contents` (the first few keys)."""
    keys = sorted(set(ours) | set(theirs))
    return [k for k in keys if ours.get(k) != theirs.get(k)][:5]
