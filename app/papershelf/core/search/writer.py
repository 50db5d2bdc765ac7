"""Keeping the index current: one serial writer, and catching up at open.

The library's change events queue paper ids; a background thread gathers a
burst of them (`batch_seconds`) into one commit, records the new state and
lets go of the shared searcher, so a tag edit never waits on a Whoosh
commit. `flush()` waits until every change queued so far is searchable.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from . import internals
from .pdftext import PaperTexts
from .schema import paper_digest, paper_document
from .source import ChangeEvent, PaperSource
from .state import IndexFolder

log = logging.getLogger(__name__)

BATCH_SECONDS = 0.25  # the writer gathers edits this long into one commit

_Item = tuple[str, set[str]]  # ("put" | "del", paper ids)


class IndexWriter:
    """Writes the library's changes into the index, in batches, on a thread of its own."""

    def __init__(
        self, source: PaperSource, index: IndexFolder, drop_searcher: Callable[[], None], texts: PaperTexts
    ) -> None:
        self.source = source
        self.index = index
        self.texts = texts  # the papers' PDFs' texts, from the text cache
        self._drop_searcher = drop_searcher  # after a commit: the next search reads it
        self.batch_seconds = BATCH_SECONDS
        self.committed: list[Callable[[], None]] = []  # called (on the writer thread) after each update lands
        self._queue: queue.Queue[_Item | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        # Changes queued and not yet committed, counted under one lock: flush()
        # waits for zero. (An "idle" event set by the writer and cleared by the
        # caller raced: a change queued between the writer's "queue empty?" and
        # its set() left the event set with a commit to come, so flush()
        # returned early and a search read the index before it landed; and a
        # change that queued nothing cleared it for good, so flush() waited
        # out its timeout.)
        self._pending = 0
        self._settled = threading.Condition()

    def on_change(self, change: ChangeEvent) -> None:
        """Queue what a library change touched (the library's subscriber)."""
        if change.kind == "papers-removed":
            self._enqueue("del", change.ids)
        elif change.ids:  # a change naming no papers (a new list) has nothing to index
            self._enqueue("put", change.ids)

    def update(self, ids: Iterable[str]) -> None:
        """Write these papers again (their PDFs' texts were extracted meanwhile)."""
        ids = set(ids)
        if ids:
            self._enqueue("put", ids)

    def _enqueue(self, kind: str, ids: Iterable[str]) -> None:
        with self._settled:
            self._pending += 1  # counted before the writer can see it
        self._queue.put((kind, set(ids)))
        self._ensure_thread()

    def _landed(self, n: int) -> None:
        """`n` queued changes are committed (or given up on) and searchable."""
        with self._settled:
            self._pending -= n
            if self._pending <= 0:
                self._pending = 0
                self._settled.notify_all()

    def flush(self, timeout: float = 60) -> bool:
        """Wait until every change queued so far is committed and searchable;
        False if that took longer than `timeout` seconds."""
        with self._settled:
            return self._settled.wait_for(lambda: self._pending == 0, timeout)

    def stop(self) -> None:
        """Let the thread finish what is queued and end (after `flush`)."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(30)
            self._thread = None

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name="papershelf-index-writer", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            put: set[str] = set()
            gone: set[str] = set()
            taken = 0
            deadline = time.monotonic() + self.batch_seconds  # gather a burst of edits into one commit
            following: _Item | bool | None = item
            while isinstance(following, tuple):
                taken += 1
                kind, ids = following
                if kind == "put":
                    put |= ids
                    gone -= ids
                else:
                    gone |= ids
                    put -= ids
                try:
                    following = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    following = False
            try:
                # the generation seen *before* reading the papers: an edit made
                # while this batch is written is newer, queued, and not claimed
                generation = self.source.generation
                self.write_batch(put, gone)
                self.index.write_state(generation)
                for callback in list(self.committed):
                    callback()
            except Exception:
                log.exception("search index update failed; it will be rebuilt on next start")
                self.index.forget_state()
            finally:
                self._landed(taken)
            if following is None:
                return

    def write_batch(self, put: set[str], gone: set[str], current: Callable[[], bool] | None = None) -> bool:
        """Write one batch: the papers in `put` as they are now, those in `gone`
        removed. With `current`: only if it still holds once the index's lock
        is taken (else nothing is written, and False)."""
        if not put and not gone:
            return current is None or current()
        source = self.source
        # The writer thread reads what the GUI thread changes: `lists()` and
        # `find()` are copies and single dict reads, not live iteration.
        member: dict[str, list[str]] = {}
        for name, ids in source.lists().items():
            for pid in put.intersection(ids):
                member.setdefault(pid, []).append(name)
        writer = internals.segment_writer(self.index.ix, timeout=10)
        try:
            if current is not None and not current():
                writer.cancel()
                return False
            for pid in gone:
                writer.delete_by_term("id", pid)
            for pid in put:
                paper = source.find(pid)
                if paper is None:
                    writer.delete_by_term("id", pid)
                else:
                    writer.update_document(
                        **paper_document(paper, member.get(pid, []), *self.texts.document_parts(paper))
                    )
            writer.commit()  # merges small segments (Whoosh's MERGE_SMALL): they stay few
        except BaseException:
            writer.cancel()
            raise
        self._drop_searcher()
        return True

    def catch_up(self) -> bool:
        """Apply what the library did while the index was not watching; False
        if this read-only copy is older than the library and wrote nothing.

        Trusts no clock: every indexed document carries the digest of what it
        was made from (`paper_digest`), and each paper whose digest differs,
        or that the index lacks, is written again; documents of papers gone
        are removed. So an edit made under a clock set back (or forward), by
        another process or on another machine, is never skipped; the store's
        generation only says whether there is anything to compare.

        A read-only library (`papershelf search`) read before another process's
        last edit holds an older copy than the index may: the writer keeps the
        index current, and this copy must not overwrite it. So it writes only
        if the library's files are still as it read them, checked under the
        index's lock (the writer journals an edit before it indexes it).

        The texts of PDFs extracted while the index was closed change no
        generation: with the generation unchanged, the papers that have PDFs
        (only those) are compared all the same."""
        state = self.index.read_state()
        source = self.source
        generation = source.generation  # before reading the papers: a later edit is queued
        same = tuple(state.get("generation", ())) == tuple(generation)
        with_files = getattr(source, "papers_with_files", None)  # a read view knows them without reading all
        if same:
            papers = list(with_files()) if with_files is not None else [p for p in source.papers() if p.files]
        else:
            papers = list(source.papers())
        if same and not papers:
            return True
        with self.index.ix.searcher() as s:
            indexed = indexed_digests(s.reader())
        member = source.memberships()
        state_of = self.texts.state
        todo = {p.id for p in papers if indexed.get(p.id) != paper_digest(p, member.get(p.id, []), state_of(p))}
        stale = set() if same else indexed.keys() - set(source.ids())
        if same and not todo:
            return True
        if not self.write_batch(todo, stale, source.unchanged_on_disk if source.readonly else None):
            return False
        self.index.write_state(generation)
        return True


def indexed_digests(reader: Any) -> dict[str, str]:
    """Paper id → the digest its document was made from, for every live
    document (Whoosh's public column readers, a segment at a time: whole
    columns as lists cost a third of reading them a document at a time)."""
    out: dict[str, str] = {}
    for segment, _base in reader.leaf_readers():
        ids = list(segment.column_reader("id"))
        digests = list(segment.column_reader("digest"))
        for docnum in segment.all_doc_ids():
            pid, digest = ids[docnum], digests[docnum]
            out[pid.decode("utf-8") if isinstance(pid, bytes) else pid] = (
                digest.decode("utf-8") if isinstance(digest, bytes) else digest
            )
    return out
