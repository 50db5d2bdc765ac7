"""Recommendations: TF-IDF features of every paper and a small linear model per tag or list.

The idea is arxiv-sanity-lite's: the papers carrying a tag are the positives,
the rest of the library the negatives; a linear model over TF-IDF features
of title + abstract ranks the papers without the tag, and the terms with
the largest weight × tf-idf in a paper say why it was suggested (the
model's own weights, nothing made up afterwards).

Features are a CSR matrix in NumPy (`indptr`, `indices`, `data`). No SciPy
and no scikit-learn: neither is a dependency, and all the models need is
X·w, Xᵀ·g and sums of rows, a line of NumPy each. Turning text into terms
is the slow part (pure Python, about 0.2 ms a paper, so seconds at 100,000
papers): `FeatureCache` keeps each paper's term counts across library
generations and re-reads only papers whose title or abstract changed, so
tagging a paper (the usual change between two requests) costs only the
matrix's reassembly, in NumPy (tests/perf/bench_suggest.py).

Two models, measured on the sample library (tests/test_suggest.py): a
logistic regression (classes balanced, gradient descent) and the
centroid difference (Rocchio). They rank held-back diffusion papers alike;
the logistic one is the default (library/discovering.py's MODEL).

Text goes the way the search index takes it: `plain_text` (no LaTeX or
Markdown), folded, split into words, stop words dropped, Porter-stemmed
(the same stemmer and stop words as core/search/schema.py, imported on
first use so that importing this module stays cheap).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import tempfile
import threading
import zipfile
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import IO

import numpy as np
import numpy.typing as npt
import orjson

from .discovery_types import Suggestion
from .paper import Paper
from .render import plain_text
from .text import fold

__all__ = ["FeatureCache", "Features", "Suggestion", "rank"]

log = logging.getLogger(__name__)

Cancelled = Callable[[], bool]
FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int32]

WORD_RE = re.compile(r"\w+(?:[.'’]\w+)*", re.UNICODE)  # core/search/schema.py's words
EXPLAIN_TERMS = 5  # terms shown with each suggestion
# Whoosh's stop words are few (the index keeps more words for phrases): function words
# beyond them would only crowd the explanations, and idf alone does not keep them out
EXTRA_STOPS = frozenset(
    "about above after again all also among any been before being below between both but cannot could did do "
    "does doing down during each few further had has having he her here hers him his how however i into its "
    "itself just me more most my no nor now off once only other our ours out over own same she should so some "
    "such than their theirs them then there these they those through thus too under until up very was were what "
    "where which while who whom why would".split()
)
FEATURES_VERSION = 1  # of the file the counts are kept in (raised when its layout or the analysis changes)
BATCH = 5_000  # papers read in one go when building features (a check for cancelling between)
_STOP = -1  # the term id of words that carry nothing (stop words, numbers, single letters)


@dataclass(frozen=True)
class Features:
    """TF-IDF rows of the papers (L2-normalised, CSR) and what each row and column is."""

    ids: list[str]  # row → paper id
    indptr: npt.NDArray[np.int64]
    indices: IntArray  # column (term id) of each stored value
    data: FloatArray  # its tf-idf weight
    terms: list[str]  # term id → the stemmed term
    column_sums: FloatArray  # all rows summed, per term: centroids without reading the matrix again

    @property
    def rows(self) -> int:
        """Number of papers."""
        return len(self.ids)

    def row_of(self) -> dict[str, int]:
        """paper id → row."""
        return {pid: i for i, pid in enumerate(self.ids)}

    def dot(self, w: FloatArray) -> FloatArray:
        """X · w: one score per row."""
        return row_sums(self.data * w[self.indices], self.indptr)

    def sum_rows(self, rows: npt.NDArray[np.int64], weights: FloatArray | None = None) -> FloatArray:
        """Σ weightᵢ · Xᵢ over the given rows (a dense vector over the terms)."""
        indptr, offsets = _gather(self.indptr, rows)
        values = self.data[offsets]
        if weights is not None:
            values = values * np.repeat(weights, np.diff(indptr))
        return np.bincount(self.indices[offsets], weights=values, minlength=len(self.terms)).astype(np.float32)

    def take(self, rows: npt.NDArray[np.int64]) -> Features:
        """The sub-matrix of these rows (the same columns; `column_sums` stays the whole matrix's)."""
        indptr, offsets = _gather(self.indptr, rows)
        ids = [self.ids[r] for r in rows]
        return Features(ids, indptr, self.indices[offsets], self.data[offsets], self.terms, self.column_sums)

    def transpose_dot(self, g: FloatArray) -> FloatArray:
        """Xᵀ · g over every row (a dense vector over the terms)."""
        lengths = np.diff(self.indptr)
        values = self.data * np.repeat(g, lengths)
        return np.bincount(self.indices, weights=values, minlength=len(self.terms)).astype(np.float32)


CountArray = npt.NDArray[np.uint16]
DigestArray = npt.NDArray[np.uint8]  # one row of 16 bytes per paper


def text_digest(title: str, abstract: str) -> bytes:
    """16 bytes that change with the text a paper's terms are counted from (its title, abstract)."""
    data = (title + "\0" + abstract).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).digest()


def _digests(papers: Sequence[Paper]) -> DigestArray:
    joined = b"".join(text_digest(p.title, p.abstract) for p in papers)
    out: DigestArray = np.frombuffer(joined, np.uint8).reshape(len(papers), 16).copy()
    return out


@dataclass(frozen=True)
class _Counts:
    """Term counts of papers, CSR like `Features`, and the text each row was counted from."""

    ids: list[str]
    # (title, abstract) of each row: the paper's own strings, not copies; None for a row read
    # from disk (its `digests` row says what text it was counted from)
    texts: list[tuple[str, str] | None]
    indptr: npt.NDArray[np.int64]
    indices: IntArray
    counts: CountArray
    digests: DigestArray  # text_digest of each row's (title, abstract): what the disk keeps of `texts`

    @staticmethod
    def empty() -> _Counts:
        return _Counts(
            [], [], np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.uint16), np.zeros((0, 16), np.uint8)
        )

    def take(self, rows: list[int]) -> _Counts:
        """These rows, in this order."""
        at = np.array(rows, np.int64)
        indptr, offsets = _gather(self.indptr, at)
        return _Counts(
            [self.ids[r] for r in rows],
            [self.texts[r] for r in rows],
            indptr,
            self.indices[offsets],
            self.counts[offsets],
            self.digests[at],
        )

    @staticmethod
    def join(parts: list[_Counts]) -> _Counts:
        """The rows of every part, one part after the other."""
        parts = [p for p in parts if p.ids] or [_Counts.empty()]
        lengths = np.concatenate([np.diff(p.indptr) for p in parts])
        indptr = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=indptr[1:])
        return _Counts(
            [pid for p in parts for pid in p.ids],
            [t for p in parts for t in p.texts],
            indptr,
            np.concatenate([p.indices for p in parts]),
            np.concatenate([p.counts for p in parts]),
            np.concatenate([p.digests for p in parts]),
        )


def _gather(
    indptr: npt.NDArray[np.int64], rows: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """For a CSR matrix's `indptr`: the indptr of the sub-matrix of `rows` and the
    positions of its stored values in the whole (no Python loop over rows)."""
    starts = indptr[rows]
    lengths = indptr[rows + 1] - starts
    sub = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(lengths, out=sub[1:])
    return sub, np.repeat(starts - sub[:-1], lengths) + np.arange(sub[-1])


class FeatureCache:
    """The library's features, kept between requests (safe from any thread).

    `features(key, papers)` gives the matrix for `key` (the library's
    generation): the one built last if the key did not change, else one
    reassembled from the per-paper term counts, re-reading only the papers
    whose title or abstract changed since. The counts are kept as one CSR
    (at 100,000 papers about 75 MB), not an array per paper (twice that).
    """

    def __init__(self, path: Path | None = None) -> None:
        self._path = path  # where the term counts are kept between runs (None: in memory only)
        self._saved = ""  # the token of the counts file that holds exactly `_counts` ("" none)
        self._lock = threading.Lock()
        self._key: Hashable = None
        self._features: Features | None = None
        self._counts = _Counts.empty()
        self._words: dict[str, int] = {}  # a word as written (folded) → term id, or _STOP
        self._terms: list[str] = []
        self._term_ids: dict[str, int] = {}
        self._stem: Callable[[str], str] | None = None
        self._stops: frozenset[str] = frozenset()

    def features(self, key: Hashable, papers: Iterable[Paper], cancelled: Cancelled | None = None) -> Features | None:
        """The features of `papers` (the library at generation `key`); None if cancelled."""
        with self._lock:
            if self._features is not None and key == self._key:
                return self._features
            papers = list(papers)
            if self._features is None and not self._counts.ids and self._path is not None:
                self._load(key, papers)
                if self._features is not None and key == self._key:
                    return self._features
            built = self._build(papers, cancelled)
            if built is not None:
                self._key, self._features = key, built
                if self._path is not None:
                    self._save(key)
            return built

    def _load(self, key: Hashable, papers: list[Paper]) -> None:
        """The term counts (and vocabulary) an earlier run kept; the matrix itself when they are of
        this very generation of the library (`key`) and its papers. Anything unreadable is let go:
        the counts are then made again."""
        assert self._path is not None
        try:
            with open(self._path, "rb") as f, np.load(f, allow_pickle=False) as kept:
                about = orjson.loads(kept["about"].tobytes())
                if about.get("version") != FEATURES_VERSION or not isinstance(about.get("token"), str):
                    return
                counts = _Counts(
                    about["ids"],
                    [None] * len(about["ids"]),
                    kept["indptr"],
                    kept["indices"],
                    kept["counts"],
                    kept["digests"],
                )
                words, terms = about["words"], about["terms"]
        except (OSError, EOFError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as exc:
            log.info("suggestion features in %s not used: %s", self._path, exc)
            return
        if len(counts.ids) + 1 != len(counts.indptr) or len(counts.digests) != len(counts.ids):
            return
        self._counts, self._words, self._terms = counts, words, terms
        self._term_ids = {term: tid for tid, term in enumerate(terms)}
        self._saved = about["token"]
        if self._kept_key() == [about["token"], _key_json(key)] and len(papers) == len(counts.ids):
            if all(p.id == pid for p, pid in zip(papers, counts.ids, strict=True)):
                self._counts = _Counts(
                    counts.ids,
                    [(p.title, p.abstract) for p in papers],
                    counts.indptr,
                    counts.indices,
                    counts.counts,
                    counts.digests,
                )
                self._key, self._features = key, _assemble(self._counts, list(terms))

    def _key_path(self) -> Path:
        assert self._path is not None
        return self._path.with_name(self._path.name + ".key")

    def _kept_key(self) -> object:
        """[token of the counts file, library generation] the counts were last kept for, or None."""
        try:
            return orjson.loads(self._key_path().read_bytes())
        except (OSError, ValueError):
            return None

    def _save(self, key: Hashable) -> None:
        """Keep the term counts and vocabulary for the next run, when they changed, and the library
        generation they are of (atomically; a failure is let go). A generation that changed no
        paper's text (a tag added) writes only the small key file."""
        assert self._path is not None
        counts = self._counts
        try:
            if not self._saved:
                token = os.urandom(8).hex()
                about = {"version": FEATURES_VERSION, "token": token, "ids": counts.ids}
                about |= {"terms": self._terms, "words": self._words}
                table = np.frombuffer(orjson.dumps(about), np.uint8)

                def write(f: IO[bytes]) -> None:
                    np.savez(
                        f,
                        indptr=counts.indptr,
                        indices=counts.indices,
                        counts=counts.counts,
                        digests=counts.digests,
                        about=table,
                    )

                _write_atomically(self._path, write)
                self._saved = token
            kept = orjson.dumps([self._saved, _key_json(key)])
            _write_atomically(self._key_path(), lambda f: f.write(kept))
        except (OSError, ValueError) as exc:
            log.info("suggestion features not kept in %s: %s", self._path, exc)

    def shown_terms(self, paper: Paper, stems: list[str]) -> list[str]:
        """The stems as the paper writes them ("diffus" → "diffusion"): the first word of
        the paper that stems to each; a stem no word gives back is shown as it is."""
        wanted = set(stems)
        seen: dict[str, str] = {}
        with self._lock:
            for word in words_of(paper):
                tid = self._words.get(word, _STOP)
                if tid >= 0:
                    term = self._terms[tid]
                    if term in wanted and term not in seen:
                        seen[term] = word
        return [seen.get(s, s) for s in stems]

    def _load_analysis(self) -> None:
        # Whoosh's Porter stemmer and stop words, as the search index uses them (schema.py);
        # imported here, on first use, like the search package itself
        from whoosh.analysis import STOP_WORDS
        from whoosh.lang.porter import stem

        self._stem, self._stops = stem, frozenset(STOP_WORDS) | EXTRA_STOPS

    def _term_id(self, word: str) -> int:
        """The term id of a folded word (added to the vocabulary if new), _STOP for noise."""
        if self._stem is None:
            self._load_analysis()
        assert self._stem is not None
        if word in self._stops or len(word) < 2 or word.isdigit():
            tid = _STOP
        else:
            term = self._stem(word) if word.isalpha() else word
            tid = self._term_ids.get(term, -2)
            if tid == -2:
                tid = self._term_ids[term] = len(self._terms)
                self._terms.append(term)
        self._words[word] = tid
        return tid

    def _count(self, papers: list[Paper]) -> _Counts:
        """The term counts of a batch of papers.

        The words of the batch are mapped to term ids in one `map` over all of them and
        counted in NumPy: a Python loop per word was most of the cost."""
        if self._stem is None:
            self._load_analysis()
        per_paper = [words_of(p) for p in papers]
        words = self._words
        for word in set(chain.from_iterable(per_paper)).difference(words):
            self._term_id(word)
        lengths = np.fromiter(map(len, per_paper), np.int64, len(per_paper))
        tids = np.fromiter(map(words.__getitem__, chain.from_iterable(per_paper)), np.int64, int(lengths.sum()))
        rows = np.repeat(np.arange(len(papers), dtype=np.int64), lengths)
        keep = tids >= 0
        span = max(len(self._terms), 1)
        # sorted by row, then term: the CSR order
        keys, counts = np.unique(rows[keep] * span + tids[keep], return_counts=True)
        key_rows = keys // span
        indptr = np.zeros(len(papers) + 1, np.int64)
        np.cumsum(np.bincount(key_rows, minlength=len(papers)), out=indptr[1:])
        return _Counts(
            [p.id for p in papers],
            [(p.title, p.abstract) for p in papers],
            indptr,
            (keys - key_rows * span).astype(np.int32),
            np.minimum(counts, 65535).astype(np.uint16),
            _digests(papers),
        )

    def _build(self, papers: list[Paper], cancelled: Cancelled | None) -> Features | None:
        old = self._counts
        row_of = {pid: r for r, pid in enumerate(old.ids)}
        kept: list[int] = []
        kept_texts: list[tuple[str, str] | None] = []
        changed: list[Paper] = []
        digests = old.digests
        for paper in papers:
            r = row_of.get(paper.id)
            if r is not None:
                text = (paper.title, paper.abstract)
                was = old.texts[r]
                # a row read from disk: its digest says whether the text is the one it was counted from
                if was == text if was is not None else digests[r].tobytes() == text_digest(*text):
                    kept.append(r)
                    kept_texts.append(text)
                    continue
            changed.append(paper)
        if not changed and kept == list(range(len(old.ids))):  # a tag changed, say: the same counts
            self._counts = _Counts(old.ids, kept_texts, old.indptr, old.indices, old.counts, old.digests)
            return _assemble(self._counts, list(self._terms))
        self._saved = ""  # the counts on disk (if any) are no longer these
        first = old.take(kept)
        first.texts[:] = kept_texts
        parts = [first]
        for start in range(0, len(changed), BATCH):
            if cancelled is not None and cancelled():
                # what was counted is kept; the papers not yet read are read next time
                self._counts = _Counts.join(parts)
                return None
            parts.append(self._count(changed[start : start + BATCH]))
        self._counts = counted = _Counts.join(parts)
        return _assemble(counted, list(self._terms))


def _write_atomically(path: Path, write: Callable[[IO[bytes]], object]) -> None:
    """A file written whole or not at all (a temporary file beside it, then renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _key_json(key: Hashable) -> object:
    """A library generation as JSON keeps it (a tuple as a list); None when it cannot be kept."""
    try:
        return orjson.loads(orjson.dumps(key))
    except TypeError:
        return None


def words_of(paper: Paper) -> list[str]:
    """The folded words of a paper's title and abstract (stop words still in)."""
    # a title Papershelf made (from the abstract, or "Untitled paper") says nothing of its own
    title = "" if paper.title_derived else paper.title
    return WORD_RE.findall(fold(plain_text(title) + " \n " + plain_text(paper.abstract)))


def row_sums(values: FloatArray, indptr: npt.NDArray[np.int64]) -> FloatArray:
    """The sum of each row's stored values (0 for an empty row)."""
    out = np.zeros(len(indptr) - 1, np.float32)
    filled = indptr[:-1] < indptr[1:]
    # reduceat over the rows that hold values only: an empty row's start would be read as
    # one value of the next row, or fall past the end of `values` for the last rows
    if filled.any():
        out[filled] = np.add.reduceat(values, indptr[:-1][filled])
    return out


def _assemble(counted: _Counts, terms: list[str]) -> Features:
    """The TF-IDF matrix from term counts: sublinear tf, smooth idf, rows L2-normalised."""
    indptr, indices = counted.indptr, counted.indices
    lengths = np.diff(indptr)
    data = counted.counts.astype(np.float32)
    df = np.bincount(indices, minlength=len(terms)).astype(np.float32)
    idf = (np.log((1.0 + len(lengths)) / (1.0 + df)) + 1.0).astype(np.float32)
    # in place, one array of the matrix's size at a time: at 100,000 papers each is 50 MB
    np.log(data, out=data)
    data += 1.0
    data *= idf[indices]
    norms = np.sqrt(row_sums(data * data, indptr))
    norms[lengths == 0] = 1.0
    data /= np.repeat(norms, lengths)
    sums = np.bincount(indices, weights=data, minlength=len(terms)).astype(np.float32)
    return Features(list(counted.ids), indptr, indices, data, terms, sums)


# ---- the models --------------------------------------------------------------


def centroid_weights(x: Features, positive: npt.NDArray[np.int64], negative_share: float = 1.0) -> FloatArray:
    """Rocchio: the positives' centroid minus the others' (`negative_share` of it)."""
    pos_sum = x.sum_rows(positive)
    neg_count = max(x.rows - len(positive), 1)
    centroids = pos_sum / len(positive) - negative_share * (x.column_sums - pos_sum) / neg_count
    return centroids.astype(np.float32)


def logistic_weights(
    x: Features,
    positive: npt.NDArray[np.int64],
    epochs: int = 30,
    l2: float = 1e-4,
    step: float = 2.0,
    cancelled: Cancelled | None = None,
) -> tuple[FloatArray, float] | None:
    """Logistic regression, classes weighted to balance, by full-batch gradient
    descent with Nesterov momentum; (weights, bias), or None if cancelled.

    Rows are L2-normalised, so the loss's gradient is 0.25-Lipschitz per
    unit of weight: a fixed step of a few units converges in tens of epochs."""
    y = np.zeros(x.rows, np.float32)
    y[positive] = 1.0
    n_pos = float(len(positive))
    n_neg = float(max(x.rows - len(positive), 1))
    # each class weighs half of the loss, whatever its size
    sample_w = np.where(y > 0, 0.5 / n_pos, 0.5 / n_neg).astype(np.float32)
    w = np.zeros(len(x.terms), np.float32)
    b = 0.0
    prev_w, prev_b = w, b
    for epoch in range(epochs):
        if cancelled is not None and cancelled():
            return None
        mom = epoch / (epoch + 3.0)
        look_w = w + mom * (w - prev_w)
        look_b = b + mom * (b - prev_b)
        z = x.dot(look_w) + look_b
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0)))
        g = ((p - y) * sample_w).astype(np.float32)
        grad_w = x.transpose_dot(g) + l2 * look_w
        prev_w, prev_b = w, b
        w = (look_w - step * grad_w).astype(np.float32)
        b = look_b - step * float(g.sum())
    return w, b


MODELS = ("logistic", "centroid")
MAX_NEGATIVES = 10_000  # negatives the logistic model trains on (a fixed sample beyond that)


def _training_rows(x: Features, positive: npt.NDArray[np.int64]) -> tuple[Features, npt.NDArray[np.int64]]:
    """The rows the logistic model trains on: every positive, and the negatives,
    a fixed random sample of MAX_NEGATIVES of them in a larger library (training cost
    is then bounded; the classes are weighted to balance anyway), with the positives'
    rows in the returned matrix."""
    if x.rows - len(positive) <= MAX_NEGATIVES:
        return x, positive
    is_pos = np.zeros(x.rows, bool)
    is_pos[positive] = True
    negatives = np.flatnonzero(~is_pos)
    sample = np.random.default_rng(0).choice(negatives, MAX_NEGATIVES, replace=False)
    rows = np.concatenate([positive, np.sort(sample)])
    return x.take(rows), np.arange(len(positive), dtype=np.int64)


def rank(
    x: Features,
    positive_ids: Sequence[str],
    exclude: Iterable[str] = (),
    limit: int = 20,
    model: str = "logistic",
    cancelled: Cancelled | None = None,
) -> list[Suggestion] | None:
    """The best `limit` papers of `x` for a model trained on `positive_ids`
    against the rest, leaving out the positives and `exclude`; None if cancelled.

    Papers without a single term (no title, no abstract) are never suggested:
    the model has nothing to say about them."""
    row_of = x.row_of()
    positive = np.array(sorted({row_of[p] for p in positive_ids if p in row_of}), np.int64)
    if model == "centroid":
        w, b = centroid_weights(x, positive), 0.0
    elif model == "logistic":
        train, train_pos = _training_rows(x, positive)
        trained = logistic_weights(train, train_pos, cancelled=cancelled)
        if trained is None:
            return None
        w, b = trained
    else:
        raise ValueError(f"unknown model {model!r}; use one of: {', '.join(MODELS)}")
    if cancelled is not None and cancelled():
        return None
    scores = x.dot(w) + np.float32(b)
    out = np.zeros(x.rows, bool)
    out[positive] = True
    out[[row_of[p] for p in exclude if p in row_of]] = True
    out[x.indptr[:-1] == x.indptr[1:]] = True
    scores[out] = -np.inf
    limit = min(limit, int((~out).sum()))
    if limit <= 0:
        return []
    top = np.argpartition(-scores, limit - 1)[:limit]
    top = top[np.argsort(-scores[top], kind="stable")]
    out_list = [Suggestion(x.ids[r], float(scores[r]), _top_terms(x, w, int(r))) for r in top]
    # a paper that shares no weighed word with the tag's papers is no suggestion, whatever its rank
    return [sug for sug in out_list if sug.terms]


def _top_terms(x: Features, w: FloatArray, row: int) -> list[str]:
    """The stems with the largest positive weight × tf-idf in this row."""
    lo, hi = int(x.indptr[row]), int(x.indptr[row + 1])
    cols = x.indices[lo:hi]
    contrib = w[cols] * x.data[lo:hi]
    order = np.argsort(-contrib, kind="stable")[:EXPLAIN_TERMS]
    return [x.terms[cols[i]] for i in order if contrib[i] > 0]
