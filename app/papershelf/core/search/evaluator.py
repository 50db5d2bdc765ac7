"""Query evaluation over a Whoosh index with numpy arrays.

Whoosh finds, scores and counts matches one document at a time in Python,
20-50 µs for every *matching* paper: a common word in a 100,000-paper
library took seconds once totals and facet counts were wanted, because they
need every match, not just the top 50. Here the same index files are read a
posting block at a time into numpy arrays (`internals.py`), and matching,
BM25F scoring, totals, facets and top-k selection are array operations.

Whoosh's query parser still understands the query; this module evaluates the
parsed tree. Node types it does not know (ranges, phrases on fields without
positions) are matched by Whoosh itself and scored here from their words, so
every query works and the common ones are fast.

Scores are Whoosh's BM25F with two choices of ours: a field's boost
multiplies the score (Whoosh's weights already count it once, so a title
word counts about three times over), and prefix, wildcard and fuzzy words
score as the sum of the words they stand for (Whoosh gives each match a
constant). `tests/test_search_scores.py` compares the scores with Whoosh's.

When the probe in `internals.py` finds Whoosh's internals changed, the
leaves are evaluated through Whoosh's public matcher and scorer instead
(`fast=False`): the same results and scores, slower.

Everything read from one segment's files is cached by segment id: those
files never change once written (an edited paper is a new document in a new
segment and a deletion in the old). Deletions do change for an old segment:
they live in the table of contents, so they are never cached here but read
by each Evaluator from its own searcher's readers (`live`). A SegmentData is
kept only while its reader is the one the searcher holds.
"""

from __future__ import annotations

import bisect
import contextlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
from whoosh import query as wquery
from whoosh.scoring import BM25F

from . import internals
from .internals import Floats, Ids

MAX_EXPANSION = 512  # terms a prefix, wildcard or fuzzy word may stand for
MAX_EXPANSIONS_KEPT = 1024  # expanded words an Evaluator remembers
# What one segment keeps of what it read, in bytes per document of the segment (and at
# least the floor): the caches grow with the index, like the postings they hold, and are
# bounded by bytes, not entries (a common word's postings are a thousand times a rare one's).
TERM_CACHE_BYTES = (400, 4 << 20)  # postings of words (facet terms stay hot)
EXPANSION_CACHE_BYTES = (200, 2 << 20)  # postings of the words prefixes and fuzzy words stand for
POSITION_CACHE_BYTES = (300, 2 << 20)  # positions of the words of phrases
DENSE_SHARE = 16  # a union of more than one document in this many is counted into dense arrays
FEW_IDS_SHARE = 16  # ids of at most one document in this many of a segment are read one by one

Weights = npt.NDArray[np.float32]
Scored = tuple[Ids, Floats]  # sorted document numbers, their scores

_EMPTY_IDS: Ids = np.zeros(0, dtype=np.int64)
_EMPTY_SCORES: Floats = np.zeros(0, dtype=np.float64)
_MULTITERMS = (wquery.Prefix, wquery.Wildcard, wquery.FuzzyTerm, wquery.Regex)


def _empty() -> Scored:
    return _EMPTY_IDS, _EMPTY_SCORES


class ByteLRU:
    """Arrays by key, the least recently used let go once they hold more than `budget` bytes."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.nbytes = 0
        self._items: OrderedDict[Any, tuple[Any, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Any) -> Any:
        """The value kept for `key` (now the most recently used), or None."""
        hit = self._items.get(key)
        if hit is None:
            return None
        self._items.move_to_end(key)
        return hit[0]

    def put(self, key: Any, value: tuple[npt.NDArray[Any], ...]) -> None:
        """Keep `value` (a tuple of arrays); the oldest go while over budget (never the newest)."""
        size = sum(a.nbytes for a in value) + 200  # the key and the tuple
        old = self._items.pop(key, None)
        if old is not None:
            self.nbytes -= old[1]
        self._items[key] = (value, size)
        self.nbytes += size
        while self.nbytes > self.budget and len(self._items) > 1:
            _, (_, gone) = self._items.popitem(last=False)
            self.nbytes -= gone


def _budget(per_doc_and_floor: tuple[int, int], count: int) -> int:
    per_doc, floor = per_doc_and_floor
    return max(floor, per_doc * count)


class SegmentData:
    """What has been read from one segment (immutable once written)."""

    def __init__(self, reader: Any, fast: bool) -> None:
        self.reader = reader
        self.fast = fast  # read the files directly (internals.py), or through Whoosh's matcher
        self.count: int = reader.doc_count_all()
        self._terms = ByteLRU(_budget(TERM_CACHE_BYTES, self.count))
        # the words prefixes and fuzzy words stand for, hundreds at a time, have their own
        # budget: they would otherwise push every other word out (the cache thrashed at 300k)
        self._expanded = ByteLRU(_budget(EXPANSION_CACHE_BYTES, self.count))
        self._positions = ByteLRU(_budget(POSITION_CACHE_BYTES, self.count))
        self._lengths: dict[str, Weights] = {}
        self._columns: dict[str, npt.NDArray[Any]] = {}
        self._ids: list[str] | None = None
        self._id_column: Any = None
        self._vocabularies: dict[str, frozenset[bytes]] = {}

    def postings(self, field: str, tbytes: bytes, expanded: bool = False) -> tuple[Ids, Weights]:
        """(segment-local ids, weights) of one term; the fast path includes deleted documents.
        `expanded`: a word a prefix or fuzzy word stands for (kept apart, see __init__)."""
        key = (field, tbytes)
        hit: tuple[Ids, Weights] | None = self._terms.get(key)
        if hit is None and expanded:
            hit = self._expanded.get(key)
        if hit is not None:
            return hit
        hit = (
            internals.read_postings(self.reader, field, tbytes) if self.fast else self._matched_postings(field, tbytes)
        )
        (self._expanded if expanded else self._terms).put(key, hit)
        return hit

    def _matched_postings(self, field: str, tbytes: bytes) -> tuple[Ids, Weights]:
        """The public road: Whoosh's matcher, one posting at a time (live documents only)."""
        reader = self.reader
        if (field, tbytes) not in reader:
            return _EMPTY_IDS, np.zeros(0, dtype=np.float32)
        m = reader.postings(field, tbytes)
        ids, weights = [], []
        while m.is_active():
            ids.append(m.id())
            weights.append(m.weight())
            m.next()
        return np.array(ids, dtype=np.int64), np.array(weights, dtype=np.float32)

    def positions(self, field: str, tbytes: bytes) -> internals.Positions:
        """Every posting of a term with its positions: (ids, offsets, flat positions), see
        `internals.read_all_positions` (fast path only)."""
        key = (field, tbytes)
        hit: internals.Positions | None = self._positions.get(key)
        if hit is None:
            hit = internals.read_all_positions(self.reader, field, tbytes)
            self._positions.put(key, hit)
        return hit

    def lengths(self, field: str) -> Weights:
        """Each document's length in `field` (words), as Whoosh recorded it (fast path only)."""
        arr = self._lengths.get(field)
        if arr is None:
            arr = self._lengths[field] = internals.read_lengths(self.reader, field, self.count)
        return arr

    def vocabulary(self, field: str) -> frozenset[bytes]:
        """Every term of `field` in this segment (read once: a set lookup costs
        nothing, Whoosh's own ~50 µs a term and segment)."""
        vocab = self._vocabularies.get(field)
        if vocab is None:
            vocab = self._vocabularies[field] = frozenset(self.reader.lexicon(field))
        return vocab

    def deleted(self) -> Ids:
        """Segment-local numbers of deleted documents (not cached: they change)."""
        if self.fast:
            return internals.deleted_docs(self.reader)
        is_deleted = self.reader.is_deleted
        return np.array([d for d in range(self.count) if is_deleted(d)], dtype=np.int64)

    def paper_ids(self) -> list[str]:
        """Each document's paper id (the `id` column)."""
        if self._ids is None:
            self._ids = [b.decode("utf-8") for b in self.reader.column_reader("id", translate=False)]
        return self._ids

    def paper_ids_of(self, docs: list[int]) -> list[str]:
        """The paper ids of these (segment-local) documents: a few are read one by one from the
        `id` column (a command's 20 hits need not read 100,000 ids), many as the whole column."""
        if self._ids is None and len(docs) * FEW_IDS_SHARE <= self.count:
            if self._id_column is None:
                self._id_column = self.reader.column_reader("id", translate=False)
            column = self._id_column
            return [column[d].decode("utf-8") for d in docs]
        every = self.paper_ids()
        return [every[d] for d in docs]

    def column(self, field: str) -> npt.NDArray[Any]:
        """A sortable column's values (bytes) for every document."""
        arr = self._columns.get(field)
        if arr is None:
            if self.reader.has_column(field):
                values = list(self.reader.column_reader(field, translate=False))
            else:
                values = [b""] * self.count
            arr = np.array(values, dtype=bytes) if values else np.zeros(0, dtype="S1")
            self._columns[field] = arr
        return arr


class Evaluator:
    """Evaluates parsed queries against one searcher's view of the index."""

    def __init__(
        self,
        searcher: Any,
        segments: dict[str, SegmentData],
        boosts: dict[str, float],
        scored: Iterable[str],
        fast: bool | None = None,
    ) -> None:
        self.searcher = searcher
        self.schema = searcher.schema
        self.boosts = boosts
        self.scored = frozenset(scored)
        self.fast = internals.usable() if fast is None else fast
        self._weighting = BM25F(B=internals.B, K1=internals.K1)
        reader = searcher.reader()
        self.leaves: list[tuple[SegmentData, int]] = []
        seen = {}
        for segreader, offset in reader.leaf_readers():
            sid = segreader.segment().segment_id()
            data = segments.get(sid)
            if data is None or data.reader is not segreader or data.fast != self.fast:
                data = SegmentData(segreader, self.fast)
            seen[sid] = data
            self.leaves.append((data, offset))
        segments.clear()
        segments.update(seen)  # segments merged away are let go
        self.size: int = reader.doc_count_all()
        self.live = np.ones(self.size, dtype=bool)
        for data, offset in self.leaves:
            if data.reader.has_deletions():
                self.live[data.deleted() + offset] = False
        self.doc_count = int(self.live.sum())
        self._avg: dict[str, float] = {}
        self._lengths: dict[str, Weights] = {}
        self._ranks: dict[str, Floats] = {}
        self._expansions: dict[tuple[Any, ...], list[bytes]] = {}
        self._paper_ids: list[str] | None = None
        self._memo: dict[int, tuple[Any, Scored]] | None = None  # within `remembering`: leaf → its answer

    @contextlib.contextmanager
    def remembering(self) -> Iterator[None]:
        """Within this, a leaf of a query tree (a phrase, a word…) evaluated once is not
        evaluated again: a second tree that shares it (`queries.without_field`'s) reuses its answer."""
        self._memo = {}
        try:
            yield
        finally:
            self._memo = None

    # ---- postings across segments --------------------------------------------
    def postings(self, field: str, tbytes: bytes, expanded: bool = False) -> tuple[Ids, Weights]:
        """(document numbers, weights) of one term in every segment."""
        ids, weights = [], []
        for data, offset in self.leaves:
            i, w = data.postings(field, tbytes, expanded)
            if len(i):
                ids.append(i + offset if offset else i)
                weights.append(w)
        if not ids:
            return _EMPTY_IDS, np.zeros(0, dtype=np.float32)
        if len(ids) == 1:
            return ids[0], weights[0]
        return np.concatenate(ids), np.concatenate(weights)

    def docs_with(self, field: str, tbytes: bytes) -> Ids:
        """The live documents holding a term (for filters and facets)."""
        ids, _ = self.postings(field, tbytes)
        return ids[self.live[ids]]

    def lengths(self, field: str) -> Weights:
        """Every document's length in `field`."""
        arr = self._lengths.get(field)
        if arr is None:
            parts = [data.lengths(field) for data, _ in self.leaves]
            arr = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
            self._lengths[field] = arr
        return arr

    def paper_ids(self, docs: Ids) -> list[str]:
        """The paper ids of these documents, in their order."""
        if self._paper_ids is None and len(docs) * FEW_IDS_SHARE <= self.size:
            return self._few_paper_ids(docs.tolist())
        if self._paper_ids is None:
            self._paper_ids = [pid for data, _ in self.leaves for pid in data.paper_ids()]
        every = self._paper_ids
        return [every[d] for d in docs.tolist()]

    def _few_paper_ids(self, docs: list[int]) -> list[str]:
        """`paper_ids` of a few documents: each segment reads only its own (see SegmentData.paper_ids_of)."""
        starts = [offset for _, offset in self.leaves]
        by_leaf: dict[int, list[int]] = {}
        for d in docs:
            by_leaf.setdefault(bisect.bisect_right(starts, d) - 1, []).append(d)
        found: dict[int, str] = {}
        for n, mine in by_leaf.items():
            data, offset = self.leaves[n]
            found.update(zip(mine, data.paper_ids_of([d - offset for d in mine]), strict=True))
        return [found[d] for d in docs]

    def rank(self, field: str) -> Floats:
        """Every document's rank by a sortable column (equal values, equal ranks)."""
        arr = self._ranks.get(field)
        if arr is None:
            parts = [data.column(field) for data, _ in self.leaves]
            width = max((p.dtype.itemsize for p in parts), default=1)
            values = np.concatenate([p.astype(f"S{width}") for p in parts]) if parts else np.zeros(0, "S1")
            arr = np.unique(values, return_inverse=True)[1].astype(np.float64).reshape(-1)
            self._ranks[field] = arr
        return arr

    def _avgdl(self, field: str) -> float:
        avg = self._avg.get(field)
        if avg is None:
            avg = self.searcher.avg_field_length(field) or 1.0
            self._avg[field] = avg
        return avg

    def _tbytes(self, field: str, text: str | bytes) -> bytes:
        if isinstance(text, bytes):
            return text
        return self.schema[field].to_bytes(text)  # type: ignore[no-any-return]

    # ---- scoring -----------------------------------------------------------
    def term(self, field: str, tbytes: bytes, boost: float = 1.0, expanded: bool = False) -> Scored:
        """The documents holding a term and their BM25F scores (zero in unscored fields);
        `expanded`: a word a prefix or fuzzy word stands for."""
        if not self.fast and field in self.scored:
            return self._scored_by_whoosh(field, tbytes, boost)
        ids, weights = self.postings(field, tbytes, expanded)
        if not len(ids) or field not in self.scored:
            return ids, np.zeros(len(ids), dtype=np.float64)
        dl = self.lengths(field)[ids]
        term_idf = internals.idf(self.size, len(ids))
        return ids, internals.bm25(term_idf, boost, self.boosts.get(field, 1.0), weights, dl, self._avgdl(field))

    def _scored_by_whoosh(self, field: str, tbytes: bytes, boost: float) -> Scored:
        """The public road: Whoosh's matcher and BM25F scorer, one document at a time."""
        if (field, tbytes) not in self.searcher.reader():
            return _empty()
        m = self.searcher.postings(field, tbytes, weighting=self._weighting)
        ids, scores = [], []
        while m.is_active():
            ids.append(m.id())
            scores.append(m.score())
            m.next()
        factor = boost * self.boosts.get(field, 1.0)
        return np.array(ids, dtype=np.int64), np.array(scores, dtype=np.float64) * factor

    # ---- the query tree ----------------------------------------------------
    def evaluate(self, q: Any) -> Scored:
        """(sorted unique document numbers, their scores) of live documents."""
        ids, scores = self._eval(q)
        keep = self.live[ids]
        return ids[keep], scores[keep]

    def _eval(self, q: Any) -> Scored:
        memo = self._memo
        if memo is not None and q.is_leaf():
            hit = memo.get(id(q))
            if hit is None:
                hit = memo[id(q)] = (q, self._eval_node(q))  # the query kept: its id stays its own
            return hit[1]
        return self._eval_node(q)

    def _eval_node(self, q: Any) -> Scored:
        if q is wquery.NullQuery or isinstance(q, wquery.NullQuery.__class__):
            return _empty()
        if isinstance(q, wquery.Every):
            if q.fieldname not in (None, "*"):  # tags:* — papers with anything in that field
                field = self.schema[q.fieldname] if q.fieldname in self.schema else None
                if field is not None and field.scorable:
                    # a text field's lengths say it at once: walking every term's postings took
                    # 86 s for `fulltext:*` over a dozen PDFs' vocabularies
                    ids = np.flatnonzero((self.lengths(q.fieldname) > 0) & self.live).astype(np.int64)
                    return ids, np.zeros(len(ids))
                return self._by_whoosh(q)
            ids = np.flatnonzero(self.live).astype(np.int64)
            return ids, np.zeros(len(ids))
        if isinstance(q, wquery.Term):
            if q.fieldname not in self.schema:
                return _empty()
            try:
                tbytes = self._tbytes(q.fieldname, q.text)
            except Exception:
                return _empty()
            return self.term(q.fieldname, tbytes, q.boost)
        if isinstance(q, _MULTITERMS):
            return self._multiterm(q)
        if type(q) is wquery.Phrase:
            return self._phrase(q)
        if isinstance(q, wquery.Not):  # inside And it is a subtraction (see _and)
            return self._and([q])
        boost = getattr(q, "boost", 1.0)
        if boost != 1.0 and isinstance(q, wquery.CompoundQuery):
            # a boost on a group (`model^2` is an Or across the fields): Whoosh
            # multiplies the group's score by it, so does this
            ids, scores = self._compound(q)
            return ids, scores * boost
        return self._compound(q)

    def _compound(self, q: Any) -> Scored:
        """A query made of others (And, Or, AndNot …): their answers combined."""
        if isinstance(q, wquery.And):
            return self._and(q.subqueries)
        if isinstance(q, wquery.DisjunctionMax):
            return _union([self._eval(sub) for sub in q.subqueries], use_max=True)
        if isinstance(q, wquery.Or):
            return _union([self._eval(sub) for sub in q.subqueries])
        if isinstance(q, wquery.AndNot):
            ids, scores = self._eval(q.a)
            bad = self._eval(q.b)[0]
            keep = ~_member(ids, bad)
            return ids[keep], scores[keep]
        if isinstance(q, wquery.Require):
            ids, scores = self._eval(q.a)
            need = self._eval(q.b)[0]
            keep = _member(ids, need)
            return ids[keep], scores[keep]
        if isinstance(q, wquery.AndMaybe):
            ids, scores = self._eval(q.a)
            extra_ids, extra = self._eval(q.b)
            pos = np.searchsorted(extra_ids, ids)
            pos[pos >= len(extra_ids)] = 0
            hit = (extra_ids[pos] == ids) if len(extra_ids) else np.zeros(len(ids), bool)
            scores = scores + np.where(hit, extra[pos] if len(extra_ids) else 0, 0)
            return ids, scores
        return self._by_whoosh(q)

    def _and(self, subqueries: Iterable[Any]) -> Scored:
        wanted, unwanted = [], []
        result: Scored
        for sub in subqueries:
            if isinstance(sub, wquery.Not):
                unwanted.append(sub.query)
            else:
                wanted.append(sub)
        if not wanted:
            ids = np.flatnonzero(self.live).astype(np.int64)
            result = (ids, np.zeros(len(ids)))
        else:
            parts = sorted((self._eval(sub) for sub in wanted), key=lambda p: len(p[0]))
            ids, scores = parts[0]
            for other_ids, other_scores in parts[1:]:
                if not len(ids):
                    break
                ids, mine, theirs = _intersect(ids, other_ids)
                scores = scores[mine] + other_scores[theirs]
            result = (ids, scores)
        for sub in unwanted:
            ids, scores = result
            if not len(ids):
                break
            keep = ~_member(ids, self._eval(sub)[0])
            result = (ids[keep], scores[keep])
        return result

    def expand(self, q: Any) -> list[bytes]:
        """The indexed terms a prefix, wildcard or fuzzy word stands for (cached)."""
        key = (
            type(q).__name__,
            q.fieldname,
            q.text,
            getattr(q, "maxdist", 0),
            getattr(q, "prefixlength", 0),
            getattr(q, "typed", ""),  # a TypoTerm: the word as typed, not only its stem
        )
        terms = self._expansions.get(key)
        if terms is None:
            terms = []
            if q.fieldname in self.schema and hasattr(q, "variants"):
                terms = self._typo_terms(q)
            elif q.fieldname in self.schema:
                for _, tbytes in q.expanded_terms(self.searcher.reader()):  # fuzzy terms come back as text
                    terms.append(self._tbytes(q.fieldname, tbytes))
                    if len(terms) >= MAX_EXPANSION:
                        break
            if len(self._expansions) >= MAX_EXPANSIONS_KEPT:
                self._expansions.pop(next(iter(self._expansions)))
            self._expansions[key] = terms
        return terms

    def _typo_terms(self, q: Any) -> list[bytes]:
        """A fuzzy word's terms (queries.py's TypoTerm): its one-edit variants the
        index holds first (looked up in each segment's vocabulary), then the terms
        near its stem, at most MAX_EXPANSION of them."""
        field = q.fieldname
        vocabularies = [data.vocabulary(field) for data, _ in self.leaves]
        terms: list[bytes] = []
        for variant in q.variants():
            tbytes = self._tbytes(field, variant)
            if any(tbytes in vocab for vocab in vocabularies):
                terms.append(tbytes)
        seen = set(terms)
        for word in q.near(self.searcher.reader()):
            if len(terms) >= MAX_EXPANSION:
                break
            tbytes = self._tbytes(field, word)
            if tbytes not in seen:
                seen.add(tbytes)
                terms.append(tbytes)
        return terms[:MAX_EXPANSION]

    def _multiterm(self, q: Any) -> Scored:
        return _union([self.term(q.fieldname, t, q.boost, expanded=True) for t in self.expand(q)])

    def positive_terms(self, q: Any) -> set[tuple[str, bytes]]:
        """(field, term) pairs that make a paper match, for highlighting: not
        the negated ones, and prefix/fuzzy words as what they matched."""
        out: set[tuple[str, bytes]] = set()
        if isinstance(q, wquery.Not):
            return out
        if isinstance(q, wquery.AndNot):
            return self.positive_terms(q.a)
        if isinstance(q, _MULTITERMS):
            return {(q.fieldname, t) for t in self.expand(q)}
        if isinstance(q, wquery.Term):
            try:
                return {(q.fieldname, self._tbytes(q.fieldname, q.text))} if q.fieldname in self.schema else out
            except Exception:
                return out
        if q.is_leaf():
            return {(f, self._tbytes(f, t)) for f, t in _words_of(q) if f in self.schema}
        for sub in q.children():
            out |= self.positive_terms(sub)
        return out

    def _phrase(self, q: Any) -> Scored:
        """Words in order, each within `slop` positions of the one before:
        candidates from the postings, then positions read for those only
        (Whoosh's span matcher costs ~100 µs a candidate; this ~5)."""
        field = q.fieldname
        if not self.fast or field not in self.schema or not self.schema[field].format.supports("positions"):
            return self._by_whoosh(q)
        try:
            words = [self._tbytes(field, w) for w in q.words]
        except Exception:
            return _empty()
        if not words:
            return _empty()
        if len(words) == 1:
            return self.term(field, words[0], q.boost)
        ids, scores = self._and([wquery.Term(field, w, boost=q.boost) for w in words])
        if not len(ids):
            return ids, scores
        keep = np.zeros(len(ids), dtype=bool)
        slop = max(1, int(q.slop))
        for data, offset in self.leaves:
            lo, hi = np.searchsorted(ids, [offset, offset + data.count])
            if lo == hi:
                continue
            local = ids[lo:hi] - offset
            found = _in_sequence([_keys(data.positions(field, w), local) for w in words], slop)
            keep[lo + found] = True
        return ids[keep], scores[keep]

    def _by_whoosh(self, q: Any) -> Scored:
        """Match with Whoosh (phrases, ranges …); score from the query's words."""
        ids = np.fromiter(q.docs(self.searcher), dtype=np.int64)
        ids.sort()
        scores = np.zeros(len(ids))
        if len(ids):
            for field, text in _words_of(q):
                if field in self.scored and field in self.schema:
                    t_ids, t_scores = self.term(field, self._tbytes(field, text), q.boost)
                    pos = np.searchsorted(t_ids, ids)
                    pos[pos >= len(t_ids)] = 0
                    if len(t_ids):
                        hit = t_ids[pos] == ids
                        scores += np.where(hit, t_scores[pos], 0)
        return ids, scores


def _keys(positions: internals.Positions, docs: Ids) -> Ids:
    """One key per position of a term in each of `docs` (which all hold it): the
    document's index in `docs` in the high 32 bits, the position in the low; ascending."""
    ids, offsets, flat = positions
    js = np.searchsorted(ids, docs)
    starts, counts = offsets[js], offsets[js + 1] - offsets[js]
    owner = np.repeat(np.arange(len(docs), dtype=np.int64), counts)
    at = np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(len(owner))
    return (owner << 32) | flat[at].astype(np.int64)


def _in_sequence(keys: list[Ids], slop: int) -> Ids:
    """Which documents (indexes, as in `_keys`) have a position of each word, in order,
    each at most `slop` after the one before (Whoosh's phrase, as its span matcher
    finds it)."""
    current = keys[0]
    for nxt in keys[1:]:
        if not len(current):
            break
        hit = np.zeros(len(nxt), dtype=bool)
        for d in range(1, slop + 1):  # a key minus d stays in its document: positions < 2**32
            want = nxt - d
            at = np.minimum(np.searchsorted(current, want), len(current) - 1)
            hit |= current[at] == want
        current = nxt[hit]
    return np.unique(current >> 32)


def _words_of(q: Any) -> list[tuple[str, Any]]:
    try:
        return [(f, t) for f, t in q.iter_all_terms() if t is not None]
    except Exception:
        return []


def _union(parts: list[Scored], use_max: bool = False) -> Scored:
    parts = [p for p in parts if len(p[0])]
    if not parts:
        return _empty()
    if len(parts) == 1:
        return parts[0]
    ids = np.concatenate([p[0] for p in parts])
    scores = np.concatenate([p[1] for p in parts])
    size = int(max(p[0][-1] for p in parts)) + 1
    if len(ids) * DENSE_SHARE >= size:
        # many documents: count into arrays as long as the index (no sort; the same sums,
        # added in the same order)
        uniq = np.flatnonzero(np.bincount(ids, minlength=size)).astype(np.int64)
        if use_max:
            best = np.full(size, -np.inf)
            np.maximum.at(best, ids, scores)
            return uniq, best[uniq]
        sums: Floats = np.bincount(ids, weights=scores, minlength=size).astype(np.float64, copy=False)
        return uniq, sums[uniq]
    uniq, inverse = np.unique(ids, return_inverse=True)
    if use_max:
        out = np.full(len(uniq), -np.inf)
        np.maximum.at(out, inverse, scores)
    else:
        out = np.bincount(inverse, weights=scores, minlength=len(uniq))
    return uniq, out


def _member(a: Ids, b: Ids) -> npt.NDArray[np.bool_]:
    """Which values of `a` are in `b` (sorted, unique), as np.isin without the sort."""
    if not len(b):
        return np.zeros(len(a), dtype=bool)
    at = np.searchsorted(b, a)
    at[at >= len(b)] = 0
    return b[at] == a  # type: ignore[no-any-return]


def _intersect(a: Ids, b: Ids) -> tuple[Ids, Ids, Ids]:
    """The common values of two sorted arrays of unique values, and where each is in
    either (as np.intersect1d's return_indices, without sorting both together)."""
    if len(a) > len(b):
        common, mine, theirs = _intersect(b, a)
        return common, theirs, mine
    at = np.searchsorted(b, a)
    at[at >= len(b)] = 0
    hit = b[at] == a if len(b) else np.zeros(len(a), dtype=bool)
    mine = np.flatnonzero(hit)
    return a[mine], mine, at[mine]


def top(ids: Ids, keys: Floats, limit: int | None, descending: bool) -> Ids:
    """Positions of the `limit` best rows by `keys`; ties go to the lower document number."""
    k = -keys if descending else keys
    if limit is not None and limit < len(ids):
        cut = np.partition(k, limit - 1)[limit - 1]
        cand = np.flatnonzero(k <= cut)  # everything tied with the last row competes
    else:
        cand = np.arange(len(ids))
    order = cand[np.lexsort((ids[cand], k[cand]))]
    return order[:limit] if limit is not None else order
