"""Full-text search: a Whoosh index kept beside the store, as a derived cache.

The index is never the only copy of anything: it can be deleted at any time
and is rebuilt from the store. It records the library generation it
reflects (`papershelf-index.json`), catches up incrementally when the
library moved on without it (another process edited it), and is rebuilt
when it is missing, from an older schema, or damaged. Whoosh is imported
here and nowhere else.

Writes go through one serial writer: `SearchIndex.update(ids)` queues, and
a background thread batches, commits and refreshes the shared searcher, so
a tag edit never waits on a Whoosh commit.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import html
import json
import logging
import os
import queue
import re
import shutil
import tempfile
import threading
import time
import unicodedata
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
from whoosh import index as windex
from whoosh import qparser, query as wquery
from whoosh.analysis import STOP_WORDS, Token, Tokenizer
from whoosh.fields import ID, KEYWORD, NUMERIC, TEXT, Schema
from whoosh.lang.porter import stem as porter_stem

from . import fastsearch
from .errors import SearchIndexDamagedError, SearchIndexError
from .indexbuild import PARENT_ENV, segment_writer
from .library import Change, Library
from .paper import Paper, Status, normalize_tag
from .text import plain_text

log = logging.getLogger(__name__)

BATCH_SECONDS = 0.25        # the writer gathers edits this long into one commit

INDEX_VERSION = 3          # bump when the schema or the analysis changes: forces a rebuild
INDEX_DIR = "index"
STATE_FILE = "papershelf-index.json"
MAX_QUERY_CHARS = 1000
MAX_QUERY_TERMS = 48
SEARCH_FIELDS = ("title", "authors", "abstract", "notes", "area")
SORTS = ("relevance", "added", "title")
FIELD_BOOSTS = {"title": 3.0, "authors": 2.0}
SEGMENT_DOCS = 10_000      # a rebuild writes segments of at most this many papers (see rebuild())
PARALLEL_MIN = 2_000       # larger libraries are indexed by one process per core
MAX_BUILD_PROCESSES = 4
# Files not checksummed at open: none. Postings and the term table are most
# of the index (~90%) and were left out once to keep open fast, but a zeroed
# range in a term table made queries miss papers without any error (found by
# tests/faults). zlib.crc32 runs at about 1 GB/s and lets go of the GIL, so
# it costs the window nothing (it opens the index on a worker thread).
UNCHECKED_SUFFIXES: tuple[str, ...] = ()




# ---- analysis --------------------------------------------------------------

_WORD_RE = re.compile(r"\w+(?:[.'’]\w+)*", re.UNICODE)
_COMBINING_RE = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
_STOPS = frozenset(STOP_WORDS)


class PaperAnalyzer(Tokenizer):
    """Tokenise, lower-case, fold accents, drop stop words and stem, in one pass.

    Whoosh's chain of generator filters does the same at a fraction of the
    speed; indexing time is dominated by analysis. Accents are folded before
    stemming ("Schrödinger" → "schrodinger" → "schroding"), which
    StemmingAnalyzer + CharsetFilter gets the wrong way round.
    """

    def __init__(self, stem: bool = True, stops: bool = True):
        self.stem = stem
        self.stops = _STOPS if stops else frozenset()
        self._cache: dict[str, str] = {}

    def __eq__(self, other):
        return (isinstance(other, PaperAnalyzer) and other.stem == self.stem
                and other.stops == self.stops)

    def __hash__(self):
        return hash((self.stem, len(self.stops)))

    def _normal(self, word: str) -> str:
        cached = self._cache.get(word)
        if cached is None:
            folded = word.lower()
            if not folded.isascii():
                folded = _COMBINING_RE.sub("", unicodedata.normalize("NFKD", folded))
            cached = porter_stem(folded) if self.stem and folded.isalpha() else folded
            if len(self._cache) > 500_000:
                self._cache.clear()
            self._cache[word] = cached
        return cached

    def __call__(self, value, positions=False, chars=False, keeporiginal=False, removestops=True,
                 start_pos=0, start_char=0, tokenize=True, mode="", **kwargs):
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        if not tokenize:
            t.original = t.text = value
            t.boost = 1.0
            if positions:
                t.pos = start_pos
            if chars:
                t.startchar, t.endchar = start_char, start_char + len(value)
            yield t
            return
        stops = self.stops
        normal = self._normal
        for pos, m in enumerate(_WORD_RE.finditer(value), start_pos):
            word = m.group()
            lowered = word.lower()
            t.stopped = lowered in stops
            if t.stopped and removestops:
                continue
            t.text = normal(word)
            t.boost = 1.0
            if keeporiginal:
                t.original = word
            if positions:
                t.pos = pos
            if chars:
                t.startchar = start_char + m.start()
                t.endchar = start_char + m.end()
            yield t


def make_schema() -> Schema:
    text = PaperAnalyzer()
    names = PaperAnalyzer(stem=False, stops=False)
    return Schema(
        id=ID(stored=True, unique=True, sortable=True),
        title=TEXT(analyzer=text, field_boost=FIELD_BOOSTS["title"]),
        authors=TEXT(analyzer=names, field_boost=FIELD_BOOSTS["authors"]),
        abstract=TEXT(analyzer=text),          # not stored: the store has it
        notes=TEXT(analyzer=text),
        area=TEXT(analyzer=names),             # area and subarea words
        area_exact=ID(),                       # the top area, for filters and facets
        tags=KEYWORD(commas=True, lowercase=True),
        status=ID(),
        lists=KEYWORD(commas=True, lowercase=True),
        year=NUMERIC(int, bits=32, signed=False),
        source=KEYWORD(lowercase=True),
        added=ID(sortable=True),
        title_sort=ID(sortable=True),
    )


def _keyword(value: str) -> str:
    """A tag or list name as one keyword: those fields split on commas, so a
    comma inside a name is stored as a look-alike that is not one."""
    return " ".join(value.split()).casefold().replace(",", "\u201a")


def paper_document(paper: Paper, lists: list[str]) -> dict:
    """What the index holds of one paper (all text as the reader sees it)."""
    doc = {
        "id": paper.id,
        "title": plain_text(paper.title),
        "authors": " ; ".join(paper.authors),
        "abstract": plain_text(paper.abstract),
        "area": f"{paper.area} {paper.subarea}".strip(),
        "area_exact": paper.area.casefold(),
        "tags": ",".join(_keyword(t) for t in paper.tags),
        "status": paper.status.value,
        "lists": ",".join(_keyword(name) for name in lists),
        "source": " ".join(sorted({Path(s.file).name.casefold() for s in paper.sources}
                                  | {s.format for s in paper.sources})),
        "added": paper.added,
        "title_sort": plain_text(paper.title).casefold()[:200],
    }
    if paper.notes:
        doc["notes"] = paper.notes
    if paper.year:
        doc["year"] = int(paper.year)
    return {k: v for k, v in doc.items() if v != ""}


# ---- results ---------------------------------------------------------------

@dataclass(slots=True)
class Results:
    ids: list[str]                      # in rank (or sort) order, at most `limit`
    total: int                          # how many papers match in all
    scores: dict[str, float] = field(default_factory=dict)
    facets: dict[str, dict[str, int]] = field(default_factory=dict)   # status/tags/area → value → count
    query: str = ""                     # the query as understood, for highlighting
    fallback: bool = False              # the parser rejected the query; plain words were used
    elapsed_ms: float = 0.0


class SearchIndex:
    """The index of one library. Use `open()`, then `search()`; `close()` at the end."""

    def __init__(self, library: Library, folder: Path | None = None):
        self.library = library
        self.folder = Path(folder) if folder else library.folder / INDEX_DIR
        self.schema = make_schema()
        self._ix = None
        self._searcher = None
        self._search_lock = threading.Lock()
        self._queue: queue.Queue = queue.Queue()
        self._writer_thread: threading.Thread | None = None
        # Changes queued and not yet committed, counted under one lock: flush()
        # waits for zero. (An "idle" event set by the writer and cleared by the
        # caller raced: a change queued between the writer's "queue empty?" and
        # its set() left the event set with a commit to come, so flush()
        # returned early and a search read the index before it landed; and a
        # change that queued nothing cleared it for good, so flush() waited
        # out its timeout.)
        self._pending = 0
        self._settled = threading.Condition()
        self.batch_seconds = BATCH_SECONDS
        self._unsubscribe: Callable[[], None] | None = None
        self._analyzer = PaperAnalyzer()
        self.rebuilt_because = ""
        self.damaged = ""           # why this object rebuilt the index as damaged ("" if it did not)
        self._damage_mark = ""      # a failed read, kept in the state file until a rebuild
        self.stale = False
        self._query_parser = None
        self._evaluator: fastsearch.Evaluator | None = None
        self._segments: dict = {}          # segment id → what was read from it (see fastsearch)
        self._facet_codes: dict = {}
        self.committed: list[Callable[[], None]] = []   # called (on the writer thread) after each update lands

    # ---- opening, rebuilding, catching up -----------------------------------
    def open(self, progress: Callable[[int, int], None] | None = None,
             cancelled: Callable[[], bool] | None = None) -> "SearchIndex":
        """Bring the index up to date (rebuilding if need be) and start following the library.

        Raises SearchIndexError when the index folder cannot be written (the
        library itself is untouched either way).
        """
        try:
            self._open(progress, cancelled)
        except OSError as exc:
            self._close_ix()
            raise self._unwritable(exc) from exc
        except windex.LockError as exc:
            self._close_ix()
            raise SearchIndexError(
                f"The search index in {self.folder} is being rebuilt by another Papershelf; "
                "try again when it has finished.", self.folder) from exc
        if not self.library.readonly:
            self._unsubscribe = self.library.subscribe(self._on_change)
        return self

    def _open(self, progress, cancelled) -> None:
        reason = self._why_rebuild()
        if reason:
            self.rebuilt_because = reason
            log.info("rebuilding the search index: %s", reason)
            self.rebuild(progress, cancelled)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ResourceWarning)
                try:
                    self._catch_up()
                except windex.LockError:
                    # another Papershelf is writing this index right now; it
                    # keeps it current, and this one searches what is there
                    self.stale = True
                except Exception as exc:   # damage Whoosh only notices when reading
                    self.rebuilt_because = self._damage(
                        f"the index could not be read ({exc.__class__.__name__}: {exc})")
                if self.rebuilt_because:
                    self._close_ix()
                    gc.collect()
            if self.rebuilt_because:
                self.rebuild(progress, cancelled)

    def _unwritable(self, exc: OSError) -> SearchIndexError:
        return SearchIndexError(
            f"The search index in {self.folder} could not be built: {exc.strerror or exc}. "
            "Your library is unaffected; searching needs that folder to be writable.", self.folder)

    def _damage(self, reason: str) -> str:
        self.damaged = reason
        return reason

    def close(self) -> None:
        if self._unsubscribe:
            self._unsubscribe()
            self._unsubscribe = None
        self.flush()
        if self._writer_thread is not None:
            self._queue.put(None)
            self._writer_thread.join(30)
            self._writer_thread = None
        self._close_ix()

    def __enter__(self) -> "SearchIndex":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _close_ix(self) -> None:
        with self._search_lock:
            if self._searcher is not None:
                self._searcher.close()
                self._searcher = None
            if self._ix is not None:
                self._ix.close()
                self._ix = None

    def _read_state(self) -> dict:
        try:
            with open(self.folder / STATE_FILE, encoding="utf-8") as f:
                state = json.load(f)
            return state if isinstance(state, dict) else {}
        except (OSError, ValueError):
            return {}

    def _file_sizes(self) -> dict[str, int]:
        sizes = {}
        for path in self.folder.iterdir():
            if path.name != STATE_FILE and not path.name.endswith(("LOCK", ".tmp")):
                try:
                    sizes[path.name] = path.stat().st_size
                except OSError:
                    pass
        return sizes

    def _damaged_files(self, recorded, crcs) -> list[str]:
        """Files of the current segments whose size or checksum is not what was written.

        Segment files never change once written; a commit by another process
        only adds files and deletes those of segments it merged away, so a
        missing file counts only if the current table of contents still
        lists its segment."""
        if not isinstance(recorded, dict):
            return []
        crcs = crcs if isinstance(crcs, dict) else {}
        now = self._file_sizes()
        live = {seg.segment_id() for seg in self._ix._segments()}

        def changed(name: str) -> bool:
            if now.get(name) != recorded[name]:
                return True
            try:
                return name in crcs and _crc32(self.folder / name) != crcs[name]
            except FileNotFoundError:      # merged away meanwhile by another process
                return False

        damaged = []
        for name in recorded:
            if name not in now:
                if any(sid in name for sid in live):
                    damaged.append(name)
            elif not name.endswith(".toc") and changed(name):
                damaged.append(name)
        # the table of contents in use must be the one written, if it was recorded
        toc = f"_{windex._DEF_INDEX_NAME}_{self._ix.latest_generation()}.toc"
        if toc in recorded and changed(toc):
            damaged.append(toc)
        return sorted(damaged)

    def _write_state(self, generation, mark: str) -> None:
        # the files' sizes and checksums as written: Whoosh has none, and a
        # file cut short or overwritten would otherwise only show (if at all)
        # when a search reads it
        sizes = self._file_sizes()
        state = {"version": INDEX_VERSION, "generation": list(generation), "updated_mark": mark,
                 "files": sizes, "crc32": self._checksums(sizes, self._read_state())}
        if self._damage_mark:
            state["damaged"] = self._damage_mark
        self._store_state(state)

    def _checksums(self, sizes: dict[str, int], previous: dict) -> dict[str, int]:
        """crc32 of the files checked at open, taken over from the previous
        state for a file of the same name and size (segment files never
        change), so a commit only reads the files it added."""
        old_sizes, old = previous.get("files"), previous.get("crc32")
        if not isinstance(old_sizes, dict) or not isinstance(old, dict):
            old_sizes, old = {}, {}
        crcs = {}
        for name, size in sizes.items():
            if name.endswith(UNCHECKED_SUFFIXES):
                continue
            if name in old and old_sizes.get(name) == size:
                crcs[name] = old[name]
            else:
                try:
                    crcs[name] = _crc32(self.folder / name)
                except OSError:      # deleted meanwhile by another process's merge
                    pass
        return crcs

    def _mark_damaged(self, detail: str) -> None:
        """Record that reading the index failed: the next open rebuilds it."""
        self._damage_mark = detail
        state = self._read_state()
        state["damaged"] = detail
        self._store_state(state)

    def _store_state(self, state: dict) -> None:
        # a temporary name of its own: the writer thread, a search that found damage and
        # another process may all write the state at once
        fd, tmp = tempfile.mkstemp(prefix=STATE_FILE + ".", suffix=".tmp", dir=self.folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(state, f)
            os.replace(tmp, self.folder / STATE_FILE)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def _why_rebuild(self) -> str:
        if not self.folder.is_dir() or not any(self.folder.glob("*.toc")):
            return "there is no index yet"
        if not (self.folder / STATE_FILE).is_file():
            return "its state file is missing"
        state = self._read_state()
        if not state:
            return self._damage(f"the index could not be read ({STATE_FILE} is damaged)")
        if state.get("damaged"):
            return self._damage(f"the index could not be read (a search failed: {state['damaged']})")
        if state.get("version") != INDEX_VERSION:
            return "the index is from another version of Papershelf"
        reason = ""
        # Whoosh leaves files open when it trips over damage; they are closed
        # (with a ResourceWarning each) when the exception lets go of them
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            try:
                self._ix = windex.open_dir(str(self.folder))
                damaged = self._damaged_files(state.get("files"), state.get("crc32"))
                if damaged:
                    raise OSError(f"files changed or went missing since they were written: "
                                  f"{', '.join(damaged[:3])}")
                with self._ix.searcher() as s:   # touch every segment: damage shows here
                    s.doc_count()
                    next(iter(s.lexicon("id")), None)
                    s.document_number(id="")
            except Exception as exc:
                # damage Whoosh trips over surfaces as any built-in error
                reason = self._damage(f"the index could not be read ({exc.__class__.__name__}: {exc})")
            if reason:
                self._close_ix()
                gc.collect()
        return reason

    def rebuild(self, progress: Callable[[int, int], None] | None = None,
                cancelled: Callable[[], bool] | None = None) -> bool:
        """Index every paper afresh, into a new folder swapped in at the end.

        Returns False (and leaves the old index in place) if cancelled. Large
        libraries are indexed as segments of SEGMENT_DOCS papers, built by one
        process per core: Whoosh spends its time in Python, so threads would
        not help, and one writer slows down as its pool spills to disk.
        """
        self._close_ix()
        try:
            self.folder.parent.mkdir(parents=True, exist_ok=True)
            lock = _try_lock(self.folder.with_name(self.folder.name + ".rebuild.lock"))
        except OSError as exc:      # a read-only folder, say
            raise self._unwritable(exc) from exc
        if lock is None:
            raise SearchIndexError(
                f"The search index in {self.folder} is being rebuilt by another Papershelf; "
                "try again when it has finished.", self.folder)
        try:
            return self._rebuild(progress, cancelled)
        except OSError as exc:
            self._close_ix()
            raise self._unwritable(exc) from exc
        except Exception as exc:
            self._close_ix()
            raise SearchIndexError(f"The search index in {self.folder} could not be built "
                                   f"({exc.__class__.__name__}: {exc}). Your library is unaffected.",
                                   self.folder) from exc
        finally:
            os.close(lock)

    def _rebuild(self, progress, cancelled) -> bool:
        new = self.folder.with_name(self.folder.name + ".new")
        _discard(new)
        new.mkdir(parents=True)
        ix = windex.create_in(str(new), self.schema)
        lib = self.library
        generation = lib.generation
        member = lib.memberships()
        papers = list(lib.papers())
        total = len(papers)
        mark = max((p.updated for p in papers), default="")
        try:
            if total <= PARALLEL_MIN or (os.cpu_count() or 1) == 1 and total <= SEGMENT_DOCS:
                done = self._build_here(ix, papers, member, progress, cancelled)
            else:
                done = self._build_in_processes(ix, new, papers, member, progress, cancelled)
        except BaseException:
            ix.close()
            shutil.rmtree(new, ignore_errors=True)
            raise
        ix.close()
        if not done:
            shutil.rmtree(new, ignore_errors=True)
            return False
        self._swap_in(new, generation, mark)
        if progress:
            progress(total, total)
        self._ix = windex.open_dir(str(self.folder))
        return True

    def _build_here(self, ix, papers, member, progress, cancelled) -> bool:
        writer = segment_writer(ix, limitmb=256)
        try:
            for n, paper in enumerate(papers):
                if cancelled and n % 500 == 0 and cancelled():
                    writer.cancel()
                    return False
                writer.add_document(**paper_document(paper, member.get(paper.id, [])))
                if progress and n % 1000 == 0:
                    progress(n, len(papers))
            writer.commit(optimize=True)
        except BaseException:
            writer.cancel()
            raise
        return True

    def _build_in_processes(self, ix, new: Path, papers, member, progress, cancelled) -> bool:
        import pickle
        import subprocess
        import sys
        from whoosh.writing import SegmentWriter

        import papershelf

        total = len(papers)
        workers = max(1, min(os.cpu_count() or 1, MAX_BUILD_PROCESSES))
        size = max(1, min(SEGMENT_DOCS, -(-total // workers)))   # every core busy, segments ≤ SEGMENT_DOCS
        jobs_dir = new.with_name(new.name + "-jobs")
        _discard(jobs_dir)
        jobs_dir.mkdir()
        jobs = []
        sizes = {}
        for k, start in enumerate(range(0, total, size)):
            job = jobs_dir / f"job{k:04d}"
            chunk = papers[start:start + size]
            with open(job, "wb") as f:
                pickle.dump([paper_document(p, member.get(p.id, [])) for p in chunk],
                            f, protocol=pickle.HIGHEST_PROTOCOL)
            jobs.append(job)
            sizes[job] = len(chunk)
        env = dict(os.environ)
        source_root = str(Path(papershelf.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [source_root, env.get("PYTHONPATH")]))
        env[PARENT_ENV] = str(os.getpid())        # workers stop if this process dies
        waiting, running, finished = list(jobs), {}, []

        def written() -> int:
            n = sum(sizes[job] for job in finished)
            for job in running:
                try:
                    n += int((jobs_dir / (job.name + ".progress")).read_text() or 0)
                except (OSError, ValueError):
                    pass
            return n

        try:
            while waiting or running:
                while waiting and len(running) < workers:
                    job = waiting.pop(0)
                    with open(job.with_suffix(".err"), "wb") as err:
                        running[job] = subprocess.Popen(
                            [sys.executable, "-m", "papershelf.core.indexbuild", str(new), str(job)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env)
                if cancelled and cancelled():
                    return False
                for job, proc in list(running.items()):
                    if proc.poll() is None:
                        continue
                    del running[job]
                    if proc.returncode != 0:
                        tail = job.with_suffix(".err").read_text(errors="replace").strip().splitlines()[-1:]
                        raise OSError(f"indexing worker failed ({proc.returncode}): {' '.join(tail)}")
                    finished.append(job)
                if progress:
                    progress(min(written(), total - 1), total)
                if running:
                    time.sleep(0.1)
            segments = []
            for job in jobs:      # in chunk order: document numbers follow the library's order
                with open(jobs_dir / (job.name + ".segment"), "rb") as f:
                    segments.append(pickle.load(f))
        finally:
            for proc in running.values():
                proc.kill()
                proc.wait()
            shutil.rmtree(jobs_dir, ignore_errors=True)
        writer = SegmentWriter(ix, limitmb=8)
        try:
            writer._close_segment()
            writer._commit_toc(segments)
        finally:
            writer._finish()
        return True

    def _swap_in(self, new: Path, generation, mark: str) -> None:
        # whatever is at `index` or `index.old` (a folder, a file) is cache: it goes
        old = self.folder.with_name(self.folder.name + ".old")
        _discard(old)
        if os.path.lexists(self.folder):
            os.replace(self.folder, old)
        os.replace(new, self.folder)
        self._damage_mark = ""
        self._write_state(generation, mark)
        _discard(old)

    def _catch_up(self) -> None:
        """Apply what the library did while the index was not watching."""
        state = self._read_state()
        lib = self.library
        if tuple(state.get("generation", ())) == tuple(lib.generation):
            return
        mark = state.get("updated_mark", "")
        with self._ix.searcher() as s:
            indexed = {term.decode("utf-8") for term in s.lexicon("id")}
        current = set(lib.ids())
        changed = [p.id for p in lib.papers() if p.updated >= mark] if mark else list(current)
        stale = indexed - current
        todo = set(changed) | (current - indexed)
        generation = lib.generation
        newest = self._write_batch(todo, stale)
        self._write_state(generation, max(mark, newest))

    # ---- writing -----------------------------------------------------------
    def _on_change(self, change: Change) -> None:
        if change.kind == "papers-removed":
            self._enqueue("del", change.ids)
        elif change.ids:            # a change naming no papers (a new list) has nothing to index
            self._enqueue("put", change.ids)

    def update(self, ids: Iterable[str]) -> None:
        """Queue papers to be (re)indexed by the writer thread."""
        self._enqueue("put", ids)

    def _enqueue(self, kind: str, ids: Iterable[str]) -> None:
        with self._settled:
            self._pending += 1      # counted before the writer can see it
        self._queue.put((kind, set(ids)))
        self._ensure_writer()

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

    def _ensure_writer(self) -> None:
        if self._writer_thread is None or not self._writer_thread.is_alive():
            self._writer_thread = threading.Thread(target=self._writer_loop, name="papershelf-index-writer",
                                                   daemon=True)
            self._writer_thread.start()

    def _writer_loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            put: set[str] = set()
            gone: set[str] = set()
            taken = 0
            deadline = time.monotonic() + self.batch_seconds     # gather a burst of edits into one commit
            while item is not None:
                taken += 1
                kind, ids = item
                if kind == "put":
                    put |= ids
                    gone -= ids
                else:
                    gone |= ids
                    put -= ids
                try:
                    item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    item = False
                if item is False:
                    break
            try:
                # the generation seen *before* reading the papers: an edit made
                # while this batch is written is newer, queued, and not claimed
                generation = self.library.generation
                mark = self._write_batch(put, gone)
                self._write_state(generation, max(mark, self._read_state().get("updated_mark", "")))
                for callback in list(self.committed):
                    callback()
            except Exception:
                log.exception("search index update failed; it will be rebuilt on next start")
                try:
                    (self.folder / STATE_FILE).unlink()
                except OSError:
                    pass
            finally:
                self._landed(taken)
            if item is None:
                return

    def _write_batch(self, put: set[str], gone: set[str]) -> str:
        """Write one batch; returns the newest `updated` among the papers written."""
        mark = ""
        if not put and not gone:
            return mark
        lib = self.library
        # The writer thread reads what the GUI thread changes: copy the lists
        # (a C-level copy, atomic under the GIL) instead of iterating them live.
        member: dict[str, list[str]] = {}
        for name, ids in list(lib._store.lists.items()):
            for pid in put.intersection(ids):
                member.setdefault(pid, []).append(name)
        writer = segment_writer(self._ix, timeout=10)
        try:
            for pid in gone:
                writer.delete_by_term("id", pid)
            for pid in put:
                paper = lib._store.papers.get(pid)
                if paper is None:
                    writer.delete_by_term("id", pid)
                else:
                    writer.update_document(**paper_document(paper, member.get(pid, [])))
                    mark = max(mark, paper.updated)
            writer.commit()   # merges small segments (Whoosh's MERGE_SMALL): they stay few
        except BaseException:
            writer.cancel()
            raise
        with self._search_lock:
            if self._searcher is not None:
                # Not Searcher.refresh(): it reuses the readers of unchanged
                # segments, whose deleted-document sets are then stale, so an
                # updated paper kept matching its old tags.
                self._searcher.close()
                self._searcher = None
        return mark

    # ---- searching ---------------------------------------------------------
    def _get_searcher(self):
        if self._searcher is None:
            self._searcher = self._ix.searcher()
            self._evaluator = None
        return self._searcher

    def _parser(self):
        if self._query_parser is None:
            self._query_parser = self._make_parser()
        return self._query_parser

    def _make_parser(self):
        parser = qparser.MultifieldParser(list(SEARCH_FIELDS), self.schema, group=qparser.AndGroup)
        parser.add_plugin(qparser.FuzzyTermPlugin())
        parser.add_plugin(qparser.GtLtPlugin())
        parser.add_plugin(qparser.FieldAliasPlugin({
            "authors": ["author", "by"], "tags": ["tag"], "lists": ["list"], "notes": ["note"],
        }))
        return parser

    def parse(self, text: str):
        """(query, fell_back): the parsed query, or plain words if the parser chokes."""
        text = _clean_query(text)
        if not text or _NOTHING_TO_SEARCH_RE.fullmatch(text):
            return wquery.Every(), False   # "", "*", a lone operator: everything, at no cost
        try:
            q = self._parser().parse(text)
            if q is wquery.NullQuery:
                raise ValueError("nothing left of the query")
            return q.accept(self._tune_fuzzy), False
        except Exception:
            return self._plain_words(text), True

    def _tune_fuzzy(self, q):
        """`diffuson~` is typed unstemmed against stemmed terms ("diffus"):
        compare stems, and allow two edits for words long enough to bear them."""
        if isinstance(q, wquery.FuzzyTerm) and q.fieldname in ("title", "abstract", "notes"):
            text = self._analyzer._normal(q.text)
            return wquery.FuzzyTerm(q.fieldname, text, boost=q.boost,
                                    maxdist=max(q.maxdist, 2 if len(text) >= 5 else 1),
                                    prefixlength=max(q.prefixlength, 1))
        return q

    def _plain_words(self, text: str):
        words = [t.text for t in self._analyzer(text)][:MAX_QUERY_TERMS]
        if not words:
            return wquery.NullQuery
        return wquery.And([wquery.Or([wquery.Term(f, w) for f in SEARCH_FIELDS]) for w in words])

    def search(self, text: str = "", status: str | None = None, tag: str | None = None,
               area: str | None = None, list_name: str | None = None, sort: str = "relevance",
               limit: int | None = 50, facets: bool = True) -> Results:
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
        return self._search(text, self._plain_words(_clean_query(text)), True, started, status, tag, area,
                            list_name, sort, limit, facets)

    def _search(self, text, q, fell_back, started, status, tag, area, list_name, sort, limit, facets) -> Results:
        filters = []
        if status:
            filters.append(("status", Status.parse(str(getattr(status, "value", status))).value))
        if tag:
            filters.append(("tags", _keyword(normalize_tag(tag))))
        if area:
            filters.append(("area_exact", area.casefold()))
        if list_name:
            filters.append(("lists", _keyword(list_name)))
        with self._search_lock:
            try:
                if not self._get_searcher().doc_count_all():
                    # an empty library's index has no segment at all (Whoosh reads it
                    # through a stand-in with none), so there is nothing to evaluate
                    return Results(ids=[], total=0, facets={k: {} for k in ("status", "area", "tags")}
                                   if facets else {}, query=text, fallback=fell_back,
                                   elapsed_ms=(time.perf_counter() - started) * 1000)
                ev = self._get_evaluator()
                docs, scores = ev.evaluate(q)
                for fieldname, value in filters:
                    if not len(docs):
                        break
                    allowed = ev.docs_with(fieldname, value.encode("utf-8"))
                    keep = np.isin(docs, allowed, assume_unique=True)
                    docs, scores = docs[keep], scores[keep]
                ranked = sort == "relevance" and bool(len(scores)) and bool(scores.any())
                if ranked:
                    order = fastsearch.top(docs, scores, limit, descending=True)
                elif sort == "title":
                    order = fastsearch.top(docs, ev.rank("title_sort")[docs], limit, descending=False)
                else:   # "added", and relevance with nothing to rank by
                    order = fastsearch.top(docs, ev.rank("added")[docs], limit, descending=True)
                ids = ev.paper_ids(docs[order])
                score_map = ({pid: float(scores[i]) for pid, i in zip(ids, order)}
                             if sort == "relevance" else {})
                found = self._facets(ev, docs) if facets else {}
                total = int(len(docs))
            except Exception as exc:
                raise self._read_failed(exc) from exc
        return Results(ids=ids, total=total, scores=score_map, facets=found, query=text,
                       fallback=fell_back, elapsed_ms=(time.perf_counter() - started) * 1000)

    def _read_failed(self, exc: Exception) -> SearchIndexError:
        """The error to raise for a read of the index that failed with `exc`.

        Whoosh has no checksums of its own: damage surfaces as any built-in
        exception (ValueError, struct.error, zlib.error, pickle errors...),
        so any failure but a permission or a closed index counts as damage
        and is recorded, and the next open rebuilds. Once this object has
        rebuilt the index as damaged, a failure is only reported: a rebuild
        would not help, and the caller must not loop.
        """
        detail = f"{exc.__class__.__name__}: {exc}"
        if self._ix is None:
            return SearchIndexError(f"The search index in {self.folder} is not open.", self.folder)
        if isinstance(exc, wquery.QueryError):
            return SearchIndexError(f"This search cannot be run ({exc}); try it without quotes.", self.folder)
        state = self._read_state()
        try:
            intact = bool(state.get("crc32")) and not self._damaged_files(state.get("files"), state.get("crc32"))
        except Exception:
            intact = False
        if intact:
            # every file is as it was written: a rebuild would change nothing
            log.warning("searching failed on an intact index (%s)", detail)
            return SearchIndexError(f"Searching failed ({detail}); the search index in {self.folder} "
                                    "is intact, so it was not rebuilt.", self.folder)
        if isinstance(exc, PermissionError):
            return SearchIndexError(f"The search index in {self.folder} could not be read: "
                                    f"{exc.strerror or exc}.", self.folder)
        if self.damaged:
            return SearchIndexError(f"Searching failed ({detail}), although the search index in "
                                    f"{self.folder} was just rebuilt.", self.folder)
        log.info("reading the search index failed (%s): marking it damaged", detail)
        try:
            self._mark_damaged(detail)
        except OSError as err:
            return SearchIndexError(f"The search index in {self.folder} is damaged ({detail}) and cannot "
                                    f"be rebuilt there: {err.strerror or err}. Your library is unaffected.",
                                    self.folder)
        return SearchIndexDamagedError(f"The search index in {self.folder} is damaged ({detail}); "
                                       "it is rebuilt when next opened.", self.folder)

    def _get_evaluator(self) -> fastsearch.Evaluator:
        searcher = self._get_searcher()     # a commit drops the searcher, and with it the evaluator
        if self._evaluator is None:
            self._evaluator = fastsearch.Evaluator(searcher, self._segments, FIELD_BOOSTS, SEARCH_FIELDS)
            self._facet_codes = {}
        return self._evaluator

    def _facets(self, ev: fastsearch.Evaluator, docs) -> dict[str, dict[str, int]]:
        found: dict[str, dict[str, int]] = {}
        for name, fieldname in (("status", "status"), ("area", "area_exact")):
            codes = self._facet_codes.get(fieldname)
            if codes is None:      # one value per paper: a code per document
                values = [t for t in self._searcher.reader().lexicon(fieldname)]
                arr = np.full(ev.size, -1, dtype=np.int32)
                for n, value in enumerate(values):
                    arr[ev.docs_with(fieldname, value)] = n
                codes = self._facet_codes[fieldname] = ([v.decode("utf-8") for v in values], arr)
            values, arr = codes
            counts = np.bincount(arr[docs] + 1, minlength=len(values) + 1)[1:]
            found[name] = {values[n]: int(c) for n, c in enumerate(counts) if c and values[n]}
        matched = np.zeros(ev.size, dtype=bool)
        matched[docs] = True
        tags = {}
        for term in self._searcher.reader().lexicon("tags"):
            n = int(matched[ev.docs_with("tags", term)].sum())
            if n:
                tags[term.decode("utf-8").replace("\u201a", ",")] = n
        found["tags"] = tags
        return found

    def snippets(self, ids: Iterable[str], text: str, top: int = 2) -> dict[str, str]:
        """Highlighted fragments of the abstract, only for the rows asked for.

        Returns HTML: the abstract text escaped, matches in <b class="match">.
        """
        q, _ = self.parse(text)
        out: dict[str, str] = {}
        with self._search_lock:
            try:
                # prefix and fuzzy terms as the search expanded them (cached), not once per row
                found = self._get_evaluator().positive_terms(q)
            except Exception:
                found = set()
        terms = {t.decode("utf-8", "replace") for f, t in found if f in ("abstract", "title")}
        if not terms:
            return out
        order = {t: n for n, t in enumerate(sorted(terms))}
        for pid in ids:
            paper = self.library._store.papers.get(pid)
            if paper is None:
                continue
            out[pid] = make_snippet(plain_text(paper.abstract), order, self._analyzer._normal, top=top)
        return out

    def highlight_terms(self, text: str) -> set[str]:
        """The indexed forms of the words a query matches in titles and abstracts
        (prefix and fuzzy words as what they matched), for highlighting; compare
        words through `normal`."""
        q, _ = self.parse(text)
        with self._search_lock:
            try:
                found = self._get_evaluator().positive_terms(q)
            except Exception:
                return set()
        return {t.decode("utf-8", "replace") for f, t in found if f in ("abstract", "title")}

    @property
    def normal(self) -> Callable[[str], str]:
        """A word as the index holds it (folded and stemmed)."""
        return self._analyzer._normal

    def more_like(self, paper_id: str, limit: int = 10) -> list[str]:
        paper = self.library.get(paper_id)
        with self._search_lock:
            try:
                s = self._get_searcher()
                docnum = s.document_number(id=paper_id)
                if docnum is None:
                    return []
                hits = s.more_like(docnum, "abstract", text=plain_text(paper.abstract), top=limit)
                return [hit["id"] for hit in hits]
            except Exception as exc:
                raise self._read_failed(exc) from exc

    def doc_count(self) -> int:
        with self._search_lock:
            try:
                return self._get_searcher().doc_count()
            except Exception as exc:
                raise self._read_failed(exc) from exc


@functools.lru_cache(maxsize=64)
def _term_finder(terms: tuple[str, ...]) -> re.Pattern:
    heads = sorted({t[:max(3, len(t) - 2)] for t in terms}, key=len, reverse=True)
    return re.compile(r"(?<![\w.'’])(?:%s)\w*(?:[.'’]\w+)*" % "|".join(map(re.escape, heads)), re.IGNORECASE)


def _crc32(path: Path) -> int:
    crc = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc


def _discard(path: Path) -> None:
    """Remove what is at `path`, a folder or a file (index leftovers: cache);
    what cannot be removed is set aside under a unique name, never left to
    block the next rebuild."""
    if path.is_dir() and not path.is_symlink() and _ours(path):
        shutil.rmtree(path, ignore_errors=True)
    # anything else (a user's own file or folder that happens to have the name) is set aside, not deleted
    if os.path.lexists(path):
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside, n = path.with_name(f"{path.name}.damaged-{stamp}"), 1
        while os.path.lexists(aside):
            n += 1
            aside = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
        os.replace(path, aside)


def _ours(folder: Path) -> bool:
    """Whether a folder is (what is left of) a search index: empty, or Whoosh's and our files only."""
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    return all(n == STATE_FILE or n.startswith((STATE_FILE, "MAIN_", "_MAIN_")) or n.endswith(
        (".toc", ".seg", ".pst", ".trm", ".fln", ".col", ".lck", ".tmp", ".json")) or n == "WRITELOCK"
        for n in names)


def _try_lock(path: Path) -> int | None:
    """An exclusive lock on `path` (released by the OS if we die), or None if held."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if os.name == "nt":  # pragma: no cover - Windows only
            import msvcrt
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


SNIPPET_CHARS = 160       # one fragment at most
SNIPPET_SURROUND = 40     # context before the first match of a fragment


def make_snippet(text: str, terms: dict[str, int], normal: Callable[[str], str], top: int = 2) -> str:
    """The `top` best fragments of `text` around words whose indexed form is in
    `terms` (term → its number, for the CSS class), in text order, joined by
    " … "; HTML-escaped, matches in <b class="match termN">. One regular
    expression pass and a cached stemmer: Whoosh's highlighter costs ~1 ms per
    abstract, this ~0.1 ms.
    """
    matches = []   # (start, end, term number)
    # Stems are (nearly) prefixes of the words they come from: in plain ASCII
    # text only words starting like a term are run through the stemmer.
    finder = _term_finder(tuple(terms)) if text.isascii() else _WORD_RE
    for m in finder.finditer(text):
        n = terms.get(normal(m.group()))
        if n is not None:
            matches.append((m.start(), m.end(), n))
    if not matches:
        return ""
    fragments = []   # (score, start, end, matches)
    i = 0
    while i < len(matches):
        start = max(0, matches[i][0] - SNIPPET_SURROUND)
        limit = start + SNIPPET_CHARS
        j = i
        while j + 1 < len(matches) and matches[j + 1][1] <= limit:
            j += 1
        inside = matches[i:j + 1]
        score = (len({n for _, _, n in inside}), len(inside))
        fragments.append((score, start, limit, inside))
        i = j + 1
    best = sorted(fragments, key=lambda f: (-f[0][0], -f[0][1], f[1]))[:top]
    parts = []
    for _, start, limit, inside in sorted(best, key=lambda f: f[1]):
        if start > 0:                       # begin and end on word boundaries
            space = text.find(" ", start, inside[0][0])
            start = space + 1 if space >= 0 else inside[0][0]
        end = min(len(text), limit)
        if end < len(text):
            space = text.rfind(" ", inside[-1][1], end)
            end = space if space >= 0 else inside[-1][1]
        pos, html_parts = start, []
        for a, b, n in inside:
            html_parts.append(html.escape(text[pos:a], quote=False))
            html_parts.append(f'<b class="match term{n}">{html.escape(text[a:b], quote=False)}</b>')
            pos = b
        html_parts.append(html.escape(text[pos:end], quote=False))
        parts.append("".join(html_parts).strip())
    return " … ".join(parts)


_NOTHING_TO_SEARCH_RE = re.compile(r"(?:[\s*?()\"'~^+\-]|\bAND\b|\bOR\b|\bNOT\b)*")


def _clean_query(text: str) -> str:
    text = "".join(ch if ch.isprintable() else " " for ch in text[:MAX_QUERY_CHARS])
    return " ".join(text.split())


