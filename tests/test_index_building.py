"""Searching while the index is being built (issue 25): the window answers a search typed during a
rebuild from what is indexed so far and says how much, then the whole answer when the build ends;
the command line waits for another process's rebuild (its progress shown), and a rebuild killed
midway is never trusted: the next search builds the index and answers exactly as a full build.

The rebuild is held between batches by a FIFO (`rebuild.GATE_ENV`): it reads one byte from it after
each batch it makes searchable; closing the FIFO lets it run on. Segments of 500 papers
(`rebuild.SEGMENT_DOCS_ENV`) make a few thousand papers several batches. Nothing sleeps: the test
waits for the rebuild to reach the FIFO, for the window's label, and for the processes' output.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import index_dir, local_dir
from papershelf.core.library import IndexState, Library
from papershelf.core.query import Query
from papershelf.core.search.rebuild import GATE_ENV, SEGMENT_DOCS_ENV

sys.path.insert(0, str(Path(__file__).resolve().parent / "perf"))
from bench_store import write_corpus  # the benchmarks' corpus: a few thousand papers

PAPERS = 3_000
BATCH = 500
WORD = "model"  # in most of the corpus's papers


@pytest.fixture
def big_library(tmp_path) -> Path:
    folder = tmp_path / "library"
    with Library.open(folder) as lib:
        lib.import_files(write_corpus(PAPERS, tmp_path / "listings", seed=25))
    return folder


@pytest.fixture
def gate(tmp_path, monkeypatch) -> Path:
    fifo = tmp_path / "gate"
    os.mkfifo(fifo)
    monkeypatch.setenv(GATE_ENV, str(fifo))
    monkeypatch.setenv(SEGMENT_DOCS_ENV, str(BATCH))
    return fifo


def held_at(fifo: Path) -> int | None:
    """The FIFO's writing end once the rebuild waits on it (None before that): close it to go on."""
    try:
        return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:  # ENXIO: no reader yet
        return None


def wait_held(fifo: Path, proc: subprocess.Popen | None = None, timeout: float = 300) -> int:
    deadline = time.monotonic() + timeout
    while (fd := held_at(fifo)) is None:
        assert proc is None or proc.poll() is None, proc.stderr.read() if proc and proc.stderr else ""
        assert time.monotonic() < deadline, "the rebuild never reached its first batch"
        time.sleep(0.05)  # polling a condition (the FIFO has a reader), not waiting out a guess
    return fd


@pytest.mark.gui
def test_a_search_typed_during_a_rebuild_shows_what_is_indexed_so_far_then_everything(
    qtbot, big_library, gate, settings
):
    from papershelf.gui.main_window import MainWindow

    lib = Library.open(big_library)
    win = MainWindow(lib)  # no index yet: the window builds it on a worker thread
    qtbot.addWidget(win)
    win.show()
    fd = None
    try:
        writer: list[int] = []
        qtbot.waitUntil(lambda: bool(writer or writer.extend(filter(None, [held_at(gate)]))), timeout=300_000)
        fd = writer[0]
        assert win.index is None  # still building
        qtbot.keyClicks(win.search_box, WORD)
        label = win.pane.result_label
        note = f"(searching {BATCH:,} of {PAPERS:,} papers; the search index is being built)"
        qtbot.waitUntil(lambda: note in label.text(), timeout=60_000)
        partial = win.last_answer
        assert partial.building == (BATCH, PAPERS) and partial.query.text == WORD
        assert 0 < partial.total <= BATCH and partial.total == len(partial.ids)
        assert partial.suggestion == "" and partial.facets == {}
        os.close(fd)  # the rebuild runs on to its end
        fd = None
        qtbot.waitUntil(lambda: win.index is not None and "being built" not in label.text(), timeout=300_000)
        qtbot.waitUntil(win.is_idle, timeout=60_000)
        full = win.last_answer
        assert full.building is None and full.query.text == WORD and full.total > partial.total
        assert set(partial.ids) <= set(full.ids)
        assert label.text().startswith(f"{full.total:,} papers")
        # exactly what a search of the finished index answers
        again = lib.search(full.query)
        assert again.building is None and full.ids[:50] == again.ids[:50] and full.total == again.total
    finally:
        if fd is not None:
            os.close(fd)
        win.close()
        lib.close()


def papershelf(data_dir: Path, *args: str, env: dict | None = None, **kw) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "papershelf", "--data-dir", str(data_dir), *args]
    return subprocess.Popen(cmd, env={**os.environ, **(env or {})}, text=True, **kw)


def test_the_cli_waits_for_another_rebuild_and_one_killed_midway_is_built_again_in_full(big_library, gate):
    # another Papershelf rebuilds the index, and is held after its first batch
    other = papershelf(big_library, "reindex", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    fd = wait_held(gate, other)
    try:
        new = local_dir(big_library) / "index.new"
        assert any(new.glob("_MAIN_*.toc")) and not (new / "papershelf-index.json").exists()
        # a search meanwhile waits, saying how far the other rebuild got (it never answers from part)
        env = {GATE_ENV: ""}
        search = papershelf(
            big_library, "search", WORD, "--limit", "40", stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        said = ""
        while f"{BATCH * 100 // PAPERS}%" not in said:
            chunk = search.stderr.read(1)
            assert chunk, f"the search ended without waiting: {said!r}"
            said += chunk
        assert said.strip().startswith(f"Indexing {PAPERS} papers for search")  # the other rebuild's share
        assert search.poll() is None  # still waiting: nothing printed as an answer
        # the rebuilding process dies midway (kill -9): its partial index is never taken as the index
        other.send_signal(signal.SIGKILL)
        other.communicate()
        out, err = search.communicate(timeout=600)
    finally:
        os.close(fd)
    assert search.returncode == 0, err
    assert "there is no index yet" in err  # it built the index itself, from scratch
    # exactly what a search answers after a rebuild run to its end in one go
    assert (
        subprocess.run(
            [sys.executable, "-m", "papershelf", "--data-dir", str(big_library), "reindex"],
            env={**os.environ, GATE_ENV: ""},
            capture_output=True,
            timeout=600,
        ).returncode
        == 0
    )
    expected = subprocess.run(
        [sys.executable, "-m", "papershelf", "--data-dir", str(big_library), "search", WORD, "--limit", "40"],
        env={**os.environ, GATE_ENV: ""},
        capture_output=True,
        text=True,
        timeout=600,
    )
    untimed = re.compile(r"\(\d+ ms\)")  # "2,746 papers match, showing 40 (30 ms)"
    assert expected.returncode == 0 and out.count("\n") >= 40
    assert untimed.sub("", out) == untimed.sub("", expected.stdout)
    assert not (local_dir(big_library) / "index.new").exists() and index_dir(big_library).is_dir()


def _open_on_thread(lib: Library, cancel: threading.Event) -> tuple[threading.Thread, list]:
    """`lib.open_index()` on a thread of its own (it waits for the other rebuild); its result lands in the list."""
    result: list = []

    def run() -> None:
        try:
            result.append(lib.open_index(cancelled=cancel.is_set))
        except BaseException as exc:  # the test asserts on it
            result.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, result


def _until(condition, what: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)  # polling a condition, not waiting out a guess


def test_an_index_taken_over_from_another_rebuild_has_the_edits_made_while_waiting(big_library, gate):
    other = papershelf(big_library, "reindex", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    fd = wait_held(gate, other)
    lib = Library.open(big_library)
    try:
        thread, result = _open_on_thread(lib, threading.Event())
        _until(lambda: lib.index_status.state is IndexState.OPENING, "the index never began opening")
        pid = lib.ids()[7]
        lib.set_title(pid, "Zyxquorble flows")  # an edit the other rebuild never read
        os.close(fd)
        fd = None
        thread.join(600)
        assert result == [True]
        assert other.wait(600) == 0
        answer = lib.search(Query(text="zyxquorble"))
        assert answer.building is None and answer.ids == [pid]
    finally:
        if fd is not None:
            os.close(fd)
        lib.close()
        if other.poll() is None:
            other.kill()
        other.communicate()


def test_a_window_waiting_on_another_rebuild_hears_of_its_batches(big_library, gate):
    # the window re-runs its search on each batch announced (`on_index_committed`), as when it builds
    other = papershelf(big_library, "reindex", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    fd = wait_held(gate, other)
    lib = Library.open(big_library)
    try:
        batches: list[int] = []
        lib.on_index_committed(lambda: batches.append(1))
        thread, result = _open_on_thread(lib, threading.Event())
        _until(lambda: batches, "no batch of the other rebuild was announced", timeout=120)
        assert not result  # still waiting for the other rebuild
        answer = lib.search(Query(text=WORD))  # what the window's re-run search shows: the batch so far
        assert answer.building == (BATCH, PAPERS) and 0 < answer.total <= BATCH
    finally:
        os.close(fd)
        other.communicate(timeout=600)
        thread.join(600)
        lib.close()


def test_cancelling_the_wait_for_another_rebuild_leaves_the_index_closed_and_searches_working(big_library, gate):
    other = papershelf(big_library, "reindex", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    fd = wait_held(gate, other)
    lib = Library.open(big_library)
    try:
        cancel = threading.Event()
        thread, result = _open_on_thread(lib, cancel)
        _until(lambda: lib.index_status.state is IndexState.OPENING, "the index never began opening")
        cancel.set()
        thread.join(600)
        assert result == [False]  # the window then says indexing was cancelled, and searches titles
        assert lib.index_status.state is IndexState.CLOSED
        title_word = lib.find(lib.ids()[0]).title.split()[0]
        answer = lib.search(Query(text=title_word))  # answered from titles, not an error
        assert lib.ids()[0] in answer.ids
    finally:
        os.close(fd)
        lib.close()
        other.communicate(timeout=600)


def test_a_killed_rebuilds_partial_index_is_never_searched_once_the_next_rebuild_holds_the_lock(big_library, gate):
    from papershelf.core.search.building import BuildView
    from papershelf.core.search.rebuild import rebuild
    from papershelf.core.search.schema import make_schema
    from papershelf.core.search.state import IndexFolder

    other = papershelf(big_library, "reindex", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    fd = wait_held(gate, other)
    lib = Library.open(big_library)
    try:
        view = BuildView(lib)
        assert view.search(text=WORD) is not None  # the live build answers, partly
        seen: list = []

        def still_needed() -> bool:  # the next rebuilder holds the lock now; it has not built anything yet
            seen.append(view.search(text=WORD))
            return False

        done: list = []
        thread = threading.Thread(
            target=lambda: done.append(
                rebuild(IndexFolder(index_dir(big_library)), lib, make_schema(), still_needed=still_needed)
            ),
            daemon=True,
        )
        thread.start()
        other.send_signal(signal.SIGKILL)
        other.communicate()
        thread.join(600)
        assert done == [True] and seen == [None]  # the dead build's batches were not an answer
    finally:
        os.close(fd)
        lib.close()


def test_a_rebuild_held_by_a_gate_nobody_writes_to_can_still_be_cancelled(big_library, gate):
    from papershelf.core.search.building import build_progress

    lib = Library.open(big_library)
    try:
        cancel = threading.Event()
        result: list = []
        thread = threading.Thread(target=lambda: result.append(lib.reindex(cancelled=cancel.is_set)), daemon=True)
        thread.start()
        new = local_dir(big_library) / "index.new"
        _until(lambda: (build_progress(new) or (0, 0))[0] >= BATCH, "the rebuild never reached its first batch")
        assert not result  # held at the gate, which no test opens for writing
        cancel.set()
        thread.join(120)
        assert result == [False]  # cancelled; the old index (none) stays, nothing half-built kept
        assert not new.exists()
    finally:
        lib.close()
