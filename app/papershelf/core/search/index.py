"""`SearchIndex`: full-text search over a library, kept beside it as a derived cache.

The index is never the only copy of anything: it can be deleted at any time
and is rebuilt from the library. It records the library generation it
reflects (`state.py`), catches up incrementally when the library moved on
without it (another process edited it), and is rebuilt when it is missing,
from an older schema, or damaged (`rebuild.py`). Edits reach it through one
serial writer thread (`writer.py`); queries are parsed by Whoosh
(`queries.py`) and evaluated with numpy (`evaluator.py`).
"""

from __future__ import annotations

import gc
import logging
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from whoosh import index as windex
from whoosh import query as wquery

from ..attachments import attachments
from ..errors import SearchIndexError
from ..paper import Status, keyword_tag, normalize_tag, tag_keyword
from ..render import plain_text
from . import internals
from .evaluator import Evaluator, SegmentData, top
from .internals import Floats, Ids
from .pdftext import PaperTexts, pdf_hashes
from .queries import QueryParser, clean_query, like_query, uses_field, without_field
from .rebuild import Cancelled, Progress
from .rebuild import rebuild as rebuild_index
from .schema import FIELD_BOOSTS, FULLTEXT, SEARCH_FIELDS, PaperAnalyzer, make_schema
from .snippets import make_page_snippet, make_snippet
from .source import PaperSource
from .state import IndexFolder
from .writer import IndexWriter

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Results:
    """What one search found."""

    ids: list[str]  # in rank (or sort) order, at most `limit`
    total: int  # how many papers match in all
    scores: dict[str, float] = field(default_factory=dict)
    facets: dict[str, dict[str, int]] = field(default_factory=dict)  # status/tags/area → value → count
    query: str = ""  # the query as understood, for highlighting
    fallback: bool = False  # the parser rejected the query; plain words were used
    elapsed_ms: float = 0.0
    fulltext_only: set[str] = field(default_factory=set)  # of `ids`: matched only in their PDFs' text


class SearchIndex:
    """The index of one library. Use `open()`, then `search()`; `close()` at the end."""

    def __init__(
        self, source: PaperSource, folder: Path | None = None, folder_kind: type[IndexFolder] = IndexFolder
    ) -> None:
        self.source = source
        self.folder = Path(folder) if folder else source.index_folder
        self.schema = make_schema()
        self._index = folder_kind(self.folder)
        # called just before a rebuilt index is put in place: readers of the one being built let go
        self.swapping: Callable[[], None] | None = None
        self._searcher: Any = None
        self._search_lock = threading.Lock()
        self.texts = PaperTexts(source.fulltext_folder)  # the PDFs' texts (Library.extract_fulltext fills it)
        self._writer = IndexWriter(source, self._index, self._drop_searcher, self.texts)
        self._unsubscribe: Callable[[], None] | None = None
        self._analyzer = PaperAnalyzer()
        self._queries = QueryParser(self.schema, self._analyzer)
        self.rebuilt_because = ""
        self.stale = False
        self.cancelled = False  # `open` was cancelled (while rebuilding): the index is not open
        self._evaluator: Evaluator | None = None
        self._segments: dict[str, SegmentData] = {}  # segment id → what was read from it
        self._facet_codes: dict[str, tuple[list[str], npt.NDArray[np.int32]]] = {}

    @property
    def damaged(self) -> str:
        """Why this object rebuilt the index as damaged ("" if it did not)."""
        return self._index.damaged

    @property
    def committed(self) -> list[Callable[[], None]]:
        """Callbacks run (on the writer thread) after each update lands; append and remove freely."""
        return self._writer.committed

    @property
    def batch_seconds(self) -> float:
        """How long the writer gathers edits into one commit."""
        return self._writer.batch_seconds

    @batch_seconds.setter
    def batch_seconds(self, value: float) -> None:
        self._writer.batch_seconds = value

    # ---- opening, rebuilding, closing -----------------------------------------
    def open(self, progress: Progress | None = None, cancelled: Cancelled | None = None) -> SearchIndex:
        """Bring the index up to date (rebuilding if need be) and start following the library.

        Raises SearchIndexError when the index folder cannot be written (the
        library itself is untouched either way).
        """
        self.cancelled = False
        try:
            self.cancelled = not self._open(progress, cancelled)
        except OSError as exc:
            self._close_ix()
            raise self._index.unwritable(exc) from exc
        except windex.LockError as exc:
            self._close_ix()
            raise self._index.busy() from exc
        if self.cancelled:  # waiting for another's rebuild, or building: nothing is open
            self._close_ix()
            return self
        if not self.source.readonly:
            self._unsubscribe = self.source.subscribe(self._writer.on_change)
        # Whoosh's internals are checked once per process, on a thread of its own
        # (about 20 ms); the first search waits for the verdict. Not while the
        # index opens: its checksums let go of the GIL a megabyte at a time, and
        # each time the probe's thread held it for a switch interval (5 ms).
        internals.start_probe()
        return self

    def _open(self, progress: Progress | None, cancelled: Cancelled | None) -> bool:
        """Open the index, rebuilding it if need be; False if cancelled (nothing is then open)."""
        reason = self._index.why_rebuild()
        if reason:
            self.rebuilt_because = reason
            log.info("rebuilding the search index: %s", reason)
            return self._rebuild_and_catch_up(progress, cancelled)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ResourceWarning)
                try:
                    # a read-only copy older than the library writes nothing: the
                    # index may be newer than it (see IndexWriter.catch_up)
                    self.stale = not self._writer.catch_up()
                except windex.LockError:
                    # another Papershelf is writing this index right now; it
                    # keeps it current, and this one searches what is there
                    self.stale = True
                except Exception as exc:  # damage Whoosh only notices when reading
                    self.rebuilt_because = self._index.damage(
                        f"the index could not be read ({exc.__class__.__name__}: {exc})"
                    )
                if self.rebuilt_because:
                    self._close_ix()
                    gc.collect()
            if self.rebuilt_because:
                return self._rebuild_and_catch_up(progress, cancelled)
        return True

    def _rebuild_and_catch_up(self, progress: Progress | None, cancelled: Cancelled | None) -> bool:
        """Rebuild (or take the index another process just rebuilt), then apply the edits made meanwhile:
        the index reflects the library as it was when that rebuild read it, and this index was not yet
        following the library's changes. False if cancelled."""
        if not self.rebuild(progress, cancelled, only_if_needed=True):
            return False
        if tuple(self._index.read_state().get("generation", ())) != tuple(self.source.generation):
            try:
                self.stale = not self._writer.catch_up()
            except windex.LockError:  # another Papershelf writes it now and keeps it current
                self.stale = True
        return True

    def rebuild(
        self, progress: Progress | None = None, cancelled: Cancelled | None = None, only_if_needed: bool = False
    ) -> bool:
        """Index every paper afresh, into a new folder swapped in at the end.

        Returns False (and leaves the old index in place) if cancelled. Large
        libraries are built by worker processes (see `rebuild.py`); while they
        run, each batch they finish is searchable (`building.BuildView`) and
        the `committed` callbacks are called. Waits while another process
        rebuilds the index; `only_if_needed`: then uses the index it built,
        if that is sound, instead of building again.
        """
        self._close_ix()
        index = self._index
        return rebuild_index(
            index,
            self.source,
            self.schema,
            progress,
            cancelled,
            self.texts,
            still_needed=(lambda: bool(index.why_rebuild())) if only_if_needed else None,
            published=self._published,
            swapping=self.swapping,
        )

    def _published(self) -> None:
        for callback in list(self.committed):
            callback()

    def close(self) -> None:
        """Stop following the library, let queued edits land, and close the index."""
        if self._unsubscribe:
            self._unsubscribe()
            self._unsubscribe = None
        self.flush()
        self._writer.stop()
        self._close_ix()

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _close_ix(self) -> None:
        with self._search_lock:
            if self._searcher is not None:
                self._searcher.close()
                self._searcher = None
            self._index.close()

    def flush(self, timeout: float = 60) -> bool:
        """Wait until every change queued so far is committed and searchable;
        False if that took longer than `timeout` seconds."""
        return self._writer.flush(timeout)

    def update(self, ids: Iterable[str]) -> None:
        """Index these papers again soon (their PDFs' texts were extracted); `flush` waits for it."""
        self._writer.update(ids)

    def _drop_searcher(self) -> None:
        """A commit landed: the next search opens a new searcher."""
        with self._search_lock:
            if self._searcher is not None:
                # Not Searcher.refresh(): it reuses the readers of unchanged
                # segments, whose deleted-document sets are then stale, so an
                # updated paper kept matching its old tags.
                self._searcher.close()
                self._searcher = None

    # ---- searching ---------------------------------------------------------
    def _get_searcher(self) -> Any:
        if self._searcher is None:
            self._searcher = self._index.ix.searcher()
            self._evaluator = None
        return self._searcher

    def _get_evaluator(self) -> Evaluator:
        searcher = self._get_searcher()  # a commit drops the searcher, and with it the evaluator
        if self._evaluator is None:
            self._evaluator = Evaluator(searcher, self._segments, FIELD_BOOSTS, SEARCH_FIELDS)
            self._facet_codes = {}
        return self._evaluator

    def parse(self, text: str) -> tuple[Any, bool]:
        """(query, fell_back): the parsed query, or plain words if the parser chokes."""
        return self._queries.parse(text)

    def search(
        self,
        text: str = "",
        status: str | None = None,
        tag: str | None = None,
        area: str | None = None,
        list_name: str | None = None,
        sort: str = "relevance",
        limit: int | None = 50,
        facets: bool = True,
    ) -> Results:
        """Papers matching `text` and every filter given, best (or newest, or by title) first.

        With no words to rank by (an empty query, only filters), relevance
        order is newest first. Facets count status, tags and area over all
        matches, not only the rows returned.
        """
        started = time.perf_counter()
        q, fell_back = self.parse(text)
        try:
            return self._search(text, q, fell_back, started, status, tag, area, list_name, sort, limit, facets)
        except SearchIndexError as exc:
            if not isinstance(exc.__cause__, wquery.QueryError) or fell_back:
                raise
        # a query Whoosh cannot run on these fields (a phrase on tags, lists or source,
        # which keep no positions) is a query problem, not damage: search its words
        return self._search(
            text,
            self._queries.plain_words(clean_query(text)),
            True,
            started,
            status,
            tag,
            area,
            list_name,
            sort,
            limit,
            facets,
        )

    def _search(
        self,
        text: str,
        q: Any,
        fell_back: bool,
        started: float,
        status: str | None,
        tag: str | None,
        area: str | None,
        list_name: str | None,
        sort: str,
        limit: int | None,
        facets: bool,
    ) -> Results:
        filters = []
        if status:
            filters.append(("status", Status.parse(str(getattr(status, "value", status))).value))
        if tag:
            filters.append(("tags", tag_keyword(normalize_tag(tag))))
        if area:
            filters.append(("area_exact", area.casefold()))
        if list_name:
            filters.append(("lists", tag_keyword(list_name)))
        with self._search_lock:
            try:
                if not self._get_searcher().doc_count_all():
                    # an empty library's index has no segment at all (Whoosh reads it
                    # through a stand-in with none), so there is nothing to evaluate
                    return Results(
                        ids=[],
                        total=0,
                        facets={k: {} for k in ("status", "area", "tags")} if facets else {},
                        query=text,
                        fallback=fell_back,
                        elapsed_ms=(time.perf_counter() - started) * 1000,
                    )
                ev = self._get_evaluator()
                with ev.remembering():  # the metadata-only query reuses the leaves it shares
                    docs, scores = ev.evaluate(q)
                    for fieldname, value in filters:
                        if not len(docs):
                            break
                        allowed = ev.docs_with(fieldname, value.encode("utf-8"))
                        keep = np.isin(docs, allowed, assume_unique=True)
                        docs, scores = docs[keep], scores[keep]
                    pdf_only = self._pdf_only(ev, q, docs)
                ranked = sort == "relevance" and bool(len(scores)) and bool(scores.any())
                if ranked:
                    order = top(docs, _metadata_first(scores, pdf_only), limit, descending=True)
                elif sort == "title":
                    order = top(docs, ev.rank("title_sort")[docs], limit, descending=False)
                else:  # "added", and relevance with nothing to rank by
                    order = top(docs, ev.rank("added")[docs], limit, descending=True)
                ids = ev.paper_ids(docs[order])
                score_map = (
                    {pid: float(scores[i]) for pid, i in zip(ids, order, strict=True)} if sort == "relevance" else {}
                )
                found = self._facets(ev, docs) if facets else {}
                total = len(docs)
                fulltext_only = set(ev.paper_ids(docs[order][pdf_only[order]])) if pdf_only is not None else set()
            except Exception as exc:
                raise self._index.read_failed(exc) from exc
        return Results(
            ids=ids,
            total=total,
            scores=score_map,
            facets=found,
            query=text,
            fallback=fell_back,
            elapsed_ms=(time.perf_counter() - started) * 1000,
            fulltext_only=fulltext_only,
        )

    @staticmethod
    def _pdf_only(ev: Evaluator, q: Any, docs: Ids) -> npt.NDArray[np.bool_] | None:
        """Which of `docs` match only through their PDFs' text: not when the query leaves out
        the `fulltext` field (None: the query never asks it)."""
        if not len(docs) or not uses_field(q, FULLTEXT):
            return None
        metadata = ev.evaluate(without_field(q, FULLTEXT))[0]
        return ~np.isin(docs, metadata, assume_unique=True)

    def _facets(self, ev: Evaluator, docs: Ids) -> dict[str, dict[str, int]]:
        found: dict[str, dict[str, int]] = {}
        reader = self._searcher.reader()
        for name, fieldname in (("status", "status"), ("area", "area_exact")):
            codes = self._facet_codes.get(fieldname)
            if codes is None:  # one value per paper: a code per document
                terms = list(reader.lexicon(fieldname))
                arr = np.full(ev.size, -1, dtype=np.int32)
                for n, term in enumerate(terms):
                    arr[ev.docs_with(fieldname, term)] = n
                codes = self._facet_codes[fieldname] = ([t.decode("utf-8") for t in terms], arr)
            values, arr = codes
            counts = np.bincount(arr[docs] + 1, minlength=len(values) + 1)[1:]
            found[name] = {values[n]: int(c) for n, c in enumerate(counts) if c and values[n]}
        matched = np.zeros(ev.size, dtype=bool)
        matched[docs] = True
        tags = {}
        for term in reader.lexicon("tags"):
            n = int(matched[ev.docs_with("tags", term)].sum())
            if n:
                tags[keyword_tag(term.decode("utf-8"))] = n
        found["tags"] = tags
        return found

    def _positive_words(self, text: str, fields: tuple[str, ...] = ("abstract", "title")) -> set[str] | None:
        """The indexed forms of the words a query matches in these fields (titles and
        abstracts); None if the index could not say."""
        q, _ = self.parse(text)
        with self._search_lock:
            try:
                # prefix and fuzzy terms as the search expanded them (cached), not once per row
                found = self._get_evaluator().positive_terms(q)
            except Exception:
                return None
        return {t.decode("utf-8", "replace") for f, t in found if f in fields}

    def snippets(self, ids: Iterable[str], text: str, top: int = 2) -> dict[str, str]:
        """Highlighted fragments of the abstract, only for the rows asked for; for a paper
        whose abstract shows none of the words, where its PDFs hold them ("p. 3: …", from
        the text cache).

        Returns HTML: the text escaped, matches in <b class="match">.
        """
        out: dict[str, str] = {}
        terms = self._positive_words(text)
        pdf_terms = self._positive_words(text, (FULLTEXT,))
        if not terms and not pdf_terms:
            return out
        order = {t: n for n, t in enumerate(sorted(terms or ()))}
        for pid in ids:
            paper = self.source.find(pid)
            if paper is None:
                continue
            found = make_snippet(plain_text(paper.abstract), order, self._analyzer._normal, top=top) if order else ""
            if not found and pdf_terms:
                found = self._pdf_snippet(paper, pdf_terms)
            out[pid] = found
        return out

    def pdf_snippet(self, paper_id: str, text: str) -> str:
        """Where the paper's PDFs hold the words of `text`: "p. 7: …the <b>diffusion</b>
        prior…" (HTML, from the text cache; "" when they hold none)."""
        paper = self.source.find(paper_id)
        terms = self._positive_words(text, (FULLTEXT,))
        if paper is None or not terms:
            return ""
        return self._pdf_snippet(paper, terms)

    def _pdf_snippet(self, paper: Any, terms: set[str]) -> str:
        shas = pdf_hashes(paper)
        if not shas:
            return ""
        order = {t: n for n, t in enumerate(sorted(terms))}
        names = {a.sha256: a.name for a in attachments(paper.files)}
        found = [(names.get(sha, ""), text) for sha in shas for text in self.texts.texts([sha])]
        return make_page_snippet([t for _n, t in found], order, self._analyzer._normal, [n for n, _t in found])

    def highlight_terms(self, text: str) -> set[str]:
        """The indexed forms of the words a query matches in titles and abstracts
        (prefix and fuzzy words as what they matched), for highlighting; compare
        words through `normal`."""
        return self._positive_words(text) or set()

    @property
    def normal(self) -> Callable[[str], str]:
        """A word as the index holds it (folded and stemmed)."""
        return self._analyzer._normal

    def more_like(self, paper_id: str, limit: int = 10) -> list[str]:
        """Papers whose abstracts resemble this paper's, best first; for a paper without
        an abstract, papers sharing the words of its title and keywords, its venue or
        its authors (`queries.like_query`)."""
        paper = self.source.get(paper_id)
        with self._search_lock:
            try:
                s = self._get_searcher()
                docnum = s.document_number(id=paper_id)
                if docnum is None:
                    return []
                text = plain_text(paper.abstract)
                if text.strip():
                    hits = s.more_like(docnum, "abstract", text=text, top=limit)
                    return [hit["id"] for hit in hits]
                ev = self._get_evaluator()

                def frequency(field: str, word: str) -> int:
                    # from the postings the evaluation reads next anyway (cached): Whoosh's
                    # doc_frequency looks each term up again in every segment
                    return len(ev.postings(field, ev._tbytes(field, word))[0])

                q = like_query(paper, self._analyzer, frequency, ev.size)
                if q is None:
                    return []
                docs, scores = ev.evaluate(q)
                keep = docs != docnum
                docs, scores = docs[keep], scores[keep]
                return ev.paper_ids(docs[top(docs, scores, limit, descending=True)])
            except Exception as exc:
                raise self._index.read_failed(exc) from exc

    def doc_count(self) -> int:
        """How many papers the index holds."""
        with self._search_lock:
            try:
                return int(self._get_searcher().doc_count())
            except Exception as exc:
                raise self._index.read_failed(exc) from exc


def _metadata_first(scores: Floats, pdf_only: npt.NDArray[np.bool_] | None) -> Floats:
    """Sort keys that put every paper matching in its record (title, abstract, authors…)
    above every paper matching only in its PDFs, each group by score."""
    if pdf_only is None or not pdf_only.any() or pdf_only.all():
        return scores
    lift = float(scores.max()) - float(scores.min()) + 1.0
    return np.where(pdf_only, scores, scores + lift)
