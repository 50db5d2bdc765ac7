"""Rebuilding the index from the library, into a new folder swapped in at the end.

Up to PARALLEL_MIN papers are indexed in this process. Larger libraries are
split into segments of at most SEGMENT_DOCS papers, each written by a child
process (`python -m papershelf.core.search.worker`, one per core, up to
MAX_BUILD_PROCESSES) and listed in one table of contents at the end: Whoosh
indexes in Python, so threads would not help (the GIL), one writer slows
down as its pool spills to disk, and `multiprocessing` would re-run the
parent's main module and fork the GUI's threads. Progress comes from small
files the workers update; cancelling kills them and keeps the old index.

While it runs, the rebuild is searchable: each segment a worker finishes is
listed in a new table of contents in `index.new` (Whoosh's generations; no
file is deleted until the last), and `building.BuildView` searches the newest
one, saying how many of how many papers it holds (`BUILD_FILE`). Only the
last table of contents, listing every segment in the library's order, is
swapped in as the index; a rebuild killed midway leaves `index.new` without
a state file, which nothing trusts as an index and the next rebuild discards.
A rebuild that finds another process rebuilding waits for it (cancellable,
its progress shown) instead of failing.
"""

from __future__ import annotations

import json
import os
import pickle
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from whoosh import index as windex

from ..errors import SearchIndexError
from ..fileio import try_lock, unlock, write_bytes_atomically
from ..paper import Paper
from . import fastwrite, internals
from .pdftext import PaperTexts, pdf_hashes
from .schema import paper_document
from .source import PaperSource
from .state import IndexFolder, discard
from .worker import FULLTEXT_KEY, PARENT_ENV, WRITER_ENV

SEGMENT_DOCS = 10_000  # a rebuild writes segments of at most this many papers
PARALLEL_MIN = 2_000  # larger libraries are indexed by one process per core
MAX_BUILD_PROCESSES = 4
WORKER_MODULE = "papershelf.core.search.worker"
BUILD_FILE = "papershelf-build.json"  # in index.new while a rebuild runs: {"papers": how many it indexes}
WAIT_POLL_S = 0.2  # how often a rebuild waiting for another process's looks again
GATE_POLL_S = 0.1  # how often a rebuild held by the test gate looks whether it was cancelled
# Tests: segments of this many papers (a few thousand papers make several batches), and a FIFO the
# rebuild reads one byte from after each batch it lists (it pauses there until the test lets it go on;
# at end of file it no longer pauses)
SEGMENT_DOCS_ENV = "PAPERSHELF_INDEX_SEGMENT_DOCS"
GATE_ENV = "PAPERSHELF_INDEX_BUILD_GATE"

Progress = Callable[[int, int], None]
Cancelled = Callable[[], bool]
Hook = Callable[[], None]


def lock_path(folder: Path) -> Path:
    """The file a rebuild of the index in `folder` holds locked while it runs."""
    return folder.with_name(folder.name + ".rebuild.lock")


def build_path(folder: Path) -> Path:
    """The folder a rebuild of the index in `folder` writes (swapped in when done)."""
    return folder.with_name(folder.name + ".new")


def _segment_docs() -> int:
    try:
        return max(1, int(os.environ.get(SEGMENT_DOCS_ENV, "")))
    except ValueError:
        return SEGMENT_DOCS


def rebuild(
    index: IndexFolder,
    source: PaperSource,
    schema: Any,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
    texts: PaperTexts | None = None,
    still_needed: Callable[[], bool] | None = None,
    published: Hook | None = None,
    swapping: Hook | None = None,
) -> bool:
    """Index every paper of `source` afresh into `index`'s folder (its `ix` must be closed).

    Returns False (and leaves the old index in place) if cancelled. While
    another process rebuilds the same index, waits for it (its progress
    reported); then, if `still_needed` says its index will do (and opened
    it), returns True without building. `published`: called after each batch
    of segments becomes searchable in `index.new`; `swapping`: just before
    `index.new` is put in place (readers of it close). Raises
    SearchIndexError when the folder cannot be written or building failed
    (the library is untouched).
    """
    folder = index.folder
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        lock = try_lock(lock_path(folder))
        if lock is None:
            lock = _wait_for_other(folder, progress, cancelled, published)
            if lock is None:
                return False
            # the lock is ours: an `index.new` now is a killed rebuild's, and searches trust any
            # `index.new` while the lock is held (building.BuildView), so it goes before anything else
            discard(build_path(folder))
            if still_needed is not None and not still_needed():
                unlock(lock)
                return True
    except OSError as exc:  # a read-only folder, say
        raise index.unwritable(exc) from exc
    try:
        hooks = (published, swapping)
        return _rebuild(index, source, schema, progress, cancelled, texts or PaperTexts(None), hooks)
    except OSError as exc:
        index.close()
        raise index.unwritable(exc) from exc
    except Exception as exc:
        index.close()
        raise SearchIndexError(
            f"The search index in {folder} could not be built "
            f"({exc.__class__.__name__}: {exc}). Your library is unaffected.",
            folder,
        ) from exc
    finally:
        unlock(lock)


def _wait_for_other(
    folder: Path, progress: Progress | None, cancelled: Cancelled | None, published: Hook | None = None
) -> int | None:
    """Wait until another process's rebuild of the index in `folder` ends, reporting how many papers
    it has made searchable (and calling `published` when that grew, as the building process does after
    each batch); the lock then (None: cancelled)."""
    from .building import build_progress

    seen = 0
    while True:
        if cancelled and cancelled():
            return None
        lock = try_lock(lock_path(folder))
        if lock is not None:
            return lock
        done = build_progress(build_path(folder))
        if progress and done:
            progress(min(done[0], done[1] - 1), done[1])
        if done and done[0] > seen:
            seen = done[0]
            if published:
                published()
        time.sleep(WAIT_POLL_S)


def _rebuild(
    index: IndexFolder,
    source: PaperSource,
    schema: Any,
    progress: Progress | None,
    cancelled: Cancelled | None,
    texts: PaperTexts,
    hooks: tuple[Hook | None, Hook | None] = (None, None),
) -> bool:
    published, swapping = hooks
    new = build_path(index.folder)
    discard(new)
    new.mkdir(parents=True)
    ix = windex.create_in(str(new), schema)
    generation = source.generation
    member = source.memberships()
    papers = list(source.papers())
    total = len(papers)
    write_bytes_atomically(new / BUILD_FILE, json.dumps({"papers": total}).encode("utf-8"))
    try:
        if (
            total <= PARALLEL_MIN
            or ((os.cpu_count() or 1) == 1 and total <= _segment_docs())
            or not internals.parallel_build()
        ):
            done = _build_here(ix, papers, member, progress, cancelled, texts)
        else:
            done = _build_in_processes(ix, new, papers, member, (progress, cancelled, published), texts)
    except BaseException:
        ix.close()
        shutil.rmtree(new, ignore_errors=True)
        raise
    ix.close()
    if not done:
        shutil.rmtree(new, ignore_errors=True)
        return False
    if swapping:
        swapping()
    (new / BUILD_FILE).unlink()
    index.swap_in(new, generation)
    if progress:
        progress(total, total)
    index.ix = windex.open_dir(str(index.folder))
    return True


def _build_here(
    ix: Any,
    papers: list[Paper],
    member: dict[str, list[str]],
    progress: Progress | None,
    cancelled: Cancelled | None,
    texts: PaperTexts,
) -> bool:
    docs = (paper_document(paper, member.get(paper.id, []), *texts.document_parts(paper)) for paper in papers)
    if internals.fast_writing():  # the whole segment at once (fastwrite.py)

        def going(n: int) -> bool:  # every 250 papers
            if progress:
                progress(n, len(papers))
            return not (cancelled and cancelled())

        if not going(0):
            return False
        try:
            segment = fastwrite.write_segment(ix, docs, going)
        except fastwrite.Cancelled:
            return False
        internals.commit_segments(ix, [segment])
        return True
    writer = internals.segment_writer(ix, limitmb=256)
    try:
        for n, doc in enumerate(docs):
            if cancelled and n % 500 == 0 and cancelled():
                writer.cancel()
                return False
            writer.add_document(**doc)
            if progress and n % 1000 == 0:
                progress(n, len(papers))
        writer.commit(optimize=True)
    except BaseException:
        writer.cancel()
        raise
    return True


def _build_in_processes(
    ix: Any,
    new: Path,
    papers: list[Paper],
    member: dict[str, list[str]],
    calls: tuple[Progress | None, Cancelled | None, Hook | None],
    texts: PaperTexts,
) -> bool:
    import papershelf

    progress, cancelled, published = calls
    total = len(papers)
    workers = max(1, min(os.cpu_count() or 1, MAX_BUILD_PROCESSES))
    size = max(1, min(_segment_docs(), -(-total // workers)))  # every core busy, segments ≤ SEGMENT_DOCS
    jobs_dir = new.with_name(new.name + "-jobs")
    discard(jobs_dir)
    jobs_dir.mkdir()
    jobs = [jobs_dir / f"job{k:04d}" for k in range(-(-total // size))]
    sizes = {job: len(papers[k * size : (k + 1) * size]) for k, job in enumerate(jobs)}

    ready: set[Path] = set()

    def write_job(job: Path) -> None:
        """A job's documents, written when a worker takes it or just before (one ahead of the
        workers): the first workers start after one job's documents are made, not all of them."""
        if job in ready:
            return
        ready.add(job)
        k = jobs.index(job)
        with open(job, "wb") as f:
            # the PDFs' texts are read by the worker (the hashes go in the job, not the texts)
            docs = [_job_document(p, member.get(p.id, []), texts) for p in papers[k * size : (k + 1) * size]]
            pickle.dump(docs, f, protocol=pickle.HIGHEST_PROTOCOL)

    env = dict(os.environ)
    source_root = str(Path(papershelf.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [source_root, env.get("PYTHONPATH")]))
    env[PARENT_ENV] = str(os.getpid())  # workers stop if this process dies
    env[WRITER_ENV] = "fast" if internals.fast_writing() else "whoosh"  # every segment written alike
    waiting: list[Path] = list(jobs)
    running: dict[Path, subprocess.Popen[bytes]] = {}
    finished: list[Path] = []
    segments: dict[Path, Any] = {}
    gate: list[int] = []  # the test hook's FIFO, once opened

    def publish(job: Path) -> None:
        """`job`'s segment is written: list it with the others finished (in the library's order) in a
        new table of contents that searches read while the rest is built. Not the last: the final
        commit lists every segment (and removes what is left of these)."""
        with open(jobs_dir / (job.name + ".segment"), "rb") as done:
            segments[job] = pickle.load(done)
        if len(segments) == len(jobs):
            return
        internals.publish_segments(ix, [segments[j] for j in jobs if j in segments])
        if published:
            published()
        _pass_gate(gate, cancelled)

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
                write_job(job)
                with open(job.with_suffix(".err"), "wb") as err:
                    running[job] = subprocess.Popen(
                        [sys.executable, "-m", WORKER_MODULE, str(new), str(job), str(texts.folder or "")],
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        stderr=err,
                        env=env,
                    )
            if waiting:
                write_job(waiting[0])  # the next job is ready when a worker ends
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
                publish(job)
            if progress:
                progress(min(written(), total - 1), total)
            if running:
                time.sleep(0.1)
    finally:
        for proc in running.values():
            proc.kill()
            proc.wait()
        for fd in gate:
            os.close(fd)
        shutil.rmtree(jobs_dir, ignore_errors=True)
    # in chunk order: document numbers follow the library's order
    internals.commit_segments(ix, [segments[job] for job in jobs])
    return True


def _pass_gate(gate: list[int], cancelled: Cancelled | None = None) -> None:
    """Tests (GATE_ENV): wait for one byte from the FIFO, opened on the first batch; at its end (its
    writer closed it), go on. Never without looking whether the rebuild was cancelled: a gate no test
    writes to holds the rebuild until it is cancelled, not for ever."""
    path = os.environ.get(GATE_ENV)
    if not path:
        return
    if not gate:
        gate.append(os.open(path, os.O_RDONLY | os.O_NONBLOCK))  # does not wait for a writer
    while not (cancelled and cancelled()):
        # a FIFO no writer ever opened is not readable; one whose writer closed it is, at its end
        if select.select([gate[0]], [], [], GATE_POLL_S)[0]:
            try:
                os.read(gate[0], 1)  # a byte, or b"": the end, where it no longer pauses
            except BlockingIOError:
                continue
            return


def _job_document(paper: Paper, lists: list[str], texts: PaperTexts) -> dict[str, Any]:
    """A paper's document for a worker: its PDFs' hashes under FULLTEXT_KEY, for the worker to read."""
    doc = paper_document(paper, lists, texts.state(paper))
    shas = pdf_hashes(paper)
    if shas:
        doc[FULLTEXT_KEY] = shas
    return doc
