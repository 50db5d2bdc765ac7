"""Odd things where a store file belongs (issue 21, defects 5, 11 and 12): a named
pipe, a link to /dev/zero, a folder, a 3 GB sparse file, a damaged journal.last, a
library file that is gone without a backup. Each is met with words, in bounded time
and memory, and the library is left as it was.

Every command runs the real CLI in a subprocess with a timeout (a hang fails the
test, not the suite), most under `prlimit --as` (a runaway read fails the test with
MemoryError instead of taking the machine's memory)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SEEDS, local_dir, same_device, snapshot_files, store_dir
from papershelf.core.library import Library
from papershelf.core.store import JOURNAL, MARK, SNAPSHOT

PRLIMIT = shutil.which("prlimit")
AS_LIMIT = 1024 * 2**20  # address space for one CLI run: the sample library needs far less
TIMEOUT = 60


def run(*args: str, data_dir: Path, limit_memory: bool = True) -> subprocess.CompletedProcess:
    """The CLI in a subprocess, with a timeout and (where prlimit is) a cap on its memory."""
    cmd = [sys.executable, "-m", "papershelf", "--data-dir", str(data_dir), *args]
    if limit_memory:
        assert PRLIMIT, "prlimit (util-linux) is needed for these tests"
        cmd = [PRLIMIT, f"--as={AS_LIMIT}", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=dict(os.environ))


@pytest.fixture(scope="module")
def base_library(tmp_path_factory) -> Path:
    """The samples, saved as a library file (generation 1) and two edits in the journal."""
    folder = tmp_path_factory.mktemp("odd") / "library"
    with Library.open(folder) as lib:
        lib.import_files(SEEDS)
        lib.compact()
        first = lib.ids()[0]
        lib.set_rating([first], 4)
        lib.set_notes(first, "a saved note")
    return folder


@pytest.fixture
def lib(base_library, tmp_path) -> Path:
    folder = tmp_path / "library"
    shutil.copytree(base_library, folder, symlinks=True)
    return same_device(folder)


def saved_state(folder: Path) -> tuple[dict, dict]:
    with Library.open(folder, readonly=True) as lib:
        return {p.id: p.raw() for p in lib.papers()}, lib.lists()


def replace_with(path: Path, kind: str) -> None:
    """Put `kind` where the store file `path` is."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "urandom":
        path.symlink_to("/dev/urandom")
    elif kind == "folder":
        path.mkdir()
    elif kind == "sparse":
        with open(path, "wb") as f:
            f.truncate(3 * 2**30)  # 3 GB of zeros that cost no disk
    else:
        raise AssertionError(kind)


def refused_in_words(res: subprocess.CompletedProcess, path: Path, words: str) -> None:
    assert res.returncode == 1, (res.returncode, res.stdout[-500:], res.stderr[-2000:])
    assert "Traceback" not in res.stderr and "MemoryError" not in res.stderr, res.stderr[-2000:]
    assert str(path) in res.stderr and words in res.stderr, res.stderr
    assert "changed nothing" in res.stderr


# ---- defect 5: odd store files ---------------------------------------------------------


def test_a_journal_linked_to_dev_zero_is_refused_in_bounded_memory(lib):
    """It used to read /dev/zero until 14.8 GB of memory in 20 s."""
    journal = store_dir(lib) / JOURNAL
    replace_with(journal, "zero")
    before = snapshot_files(lib)
    for command in (["list"], ["recover"]):
        res = run(*command, data_dir=lib)
        refused_in_words(res, journal, "is a device (such as /dev/zero), not a file")
        assert "move it out of the folder" in res.stderr
    assert snapshot_files(lib) == before and journal.is_symlink()


@pytest.mark.parametrize("name", [JOURNAL, SNAPSHOT])
def test_a_named_pipe_as_journal_or_library_file_is_refused_not_waited_on(lib, name):
    """Opening a named pipe to read waits for a writer forever: it used to hang `list`."""
    path = store_dir(lib) / name
    replace_with(path, "fifo")
    for command in (["list"], ["tag", "--add", "x", "--", "f" * 10], ["recover"]):
        res = run(*command, data_dir=lib)
        refused_in_words(res, path, "is a named pipe, not a file")
    assert path.exists() and not path.is_file()  # left as it was


@pytest.mark.parametrize("name", [SNAPSHOT, JOURNAL])
def test_a_3_gb_file_of_zeros_is_refused_by_its_size(lib, name):
    """It used to be read whole: MemoryError."""
    path = store_dir(lib) / name
    replace_with(path, "sparse")
    for command in (["list"], ["recover"]):
        res = run(*command, data_dir=lib)
        refused_in_words(res, path, "is 3.0 GB: no Papershelf")
    assert path.stat().st_size == 3 * 2**30


def test_a_named_pipe_as_the_readers_lock_is_refused(lib):
    """Readers open library.readlock: a named pipe there used to hang every `list`."""
    path = local_dir(lib) / "library.readlock"  # this machine's, outside the library folder
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_with(path, "fifo")
    refused_in_words(run("list", data_dir=lib), path, "is a named pipe, not a file")


def test_a_named_pipe_among_the_backups_is_skipped(lib):
    """The library file is missing; the newest "backup" is a named pipe: recover takes the good one."""
    papers = saved_state(lib)[0]
    with Library.open(lib) as library:
        library.compact()  # keeps the generation-1 library file as a backup
    backups = sorted((store_dir(lib) / "backups").iterdir())
    assert backups
    os.mkfifo(store_dir(lib) / "backups" / "library-99991231-235959-g99.jsonl")
    (store_dir(lib) / SNAPSHOT).unlink()
    res = run("list", data_dir=lib)
    assert res.returncode == 1 and "is missing" in res.stderr and str(backups[-1]) in res.stderr, res.stderr
    res = run("recover", data_dir=lib)
    assert res.returncode == 0 and str(backups[-1]) in res.stdout, res.stderr
    assert set(saved_state(lib)[0]) == set(papers)  # as the backup had them


# ---- defect 11: journal.last ------------------------------------------------------------


def test_every_bit_flip_of_journal_last_is_harmless(lib):
    """Each single-bit flip of journal.last: the library opens with exactly what was
    saved, and recover finds nothing lost. It used to refuse 3 of 336 ("saved edits
    missing"), and recover then reported losses that never happened."""
    mark = store_dir(lib) / MARK
    good = mark.read_bytes()
    expected = saved_state(lib)
    before = snapshot_files(lib)
    wrong = []
    for offset in range(len(good)):
        for bit in range(8):
            flipped = bytearray(good)
            flipped[offset] ^= 1 << bit
            mark.write_bytes(bytes(flipped))
            try:
                if saved_state(lib) != expected:
                    wrong.append((offset, bit, "a different state"))
            except Exception as exc:
                wrong.append((offset, bit, str(exc)[:100]))
    assert not wrong, f"{len(wrong)} of {8 * len(good)} flips: {wrong[:5]}"
    mark.write_bytes(good)
    assert snapshot_files(lib) == before
    # through the command line: every flip of the number of the last edit (where a flip
    # that makes it larger looked like saved edits gone from the journal)
    digits = [m.start() for m in re.finditer(rb"\d", good)][-2:]
    for offset in digits:
        for bit in range(8):
            flipped = bytearray(good)
            flipped[offset] ^= 1 << bit
            mark.write_bytes(bytes(flipped))
            res = run("list", data_dir=lib)
            assert res.returncode == 0 and "a saved note" not in res.stderr, (offset, bit, res.stderr)
            res = run("recover", data_dir=lib)
            assert res.returncode == 0, res.stderr
            assert res.stdout.startswith("Nothing needed recovering"), (offset, bit, res.stdout)
    assert saved_state(lib) == expected


def test_journal_last_is_sealed_and_a_damaged_one_is_written_again(lib):
    """journal.last carries a checksum like every line of the store; a writable open
    seals a damaged (or old) one again, so the check it adds comes back."""
    mark = store_dir(lib) / MARK
    good = mark.read_bytes()
    assert re.fullmatch(rb'\{"gen": +1, "seq": +\d+\}\t[0-9a-f]{8}\n', good), good
    mark.write_bytes(b"\0" * 4096)
    pid = sorted(saved_state(lib)[0])[0]
    res = run("tag", pid, "--add", "again", data_dir=lib)
    assert res.returncode == 0, res.stderr
    with Library.open(lib) as library:
        seq = library.generation[1]
    assert re.fullmatch(rb'\{"gen": +1, "seq": +%d\}\t[0-9a-f]{8}\n' % seq, mark.read_bytes())


def test_an_old_unsealed_journal_last_is_still_read(lib):
    """Written by the previous Papershelf ("%20d %20d\\n"): still read as it is (a journal
    that ends before it is refused), and sealed at the first writable open."""
    mark = store_dir(lib) / MARK
    with Library.open(lib, readonly=True) as library:
        gen, seq = library.generation
    mark.write_bytes(b"%20d %20d\n" % (gen, seq + 5))
    res = run("list", data_dir=lib)
    assert res.returncode == 1 and "5 saved edit(s) at its end are missing" in res.stderr, res.stderr
    mark.write_bytes(b"%20d %20d\n" % (gen, seq))
    expected = saved_state(lib)
    with Library.open(lib):
        pass
    assert mark.read_bytes().endswith(b"\n") and b'"seq"' in mark.read_bytes()
    assert saved_state(lib) == expected


# ---- defect 12: a missing library file ---------------------------------------------------


def test_a_missing_library_file_without_backups_is_refused_in_words(lib):
    """It used to say "keep the library file", which did not exist."""
    (store_dir(lib) / SNAPSHOT).unlink()
    before = snapshot_files(lib)
    res = run("list", data_dir=lib)
    assert res.returncode == 1, res.stdout
    assert "keep the library file" not in res.stderr and "Traceback" not in res.stderr
    assert f"The library file {store_dir(lib) / SNAPSHOT} is missing, and there is no backup of it" in res.stderr
    assert f"the journal {store_dir(lib) / JOURNAL} holds 2 edit(s) made to it" in res.stderr
    assert "put it back" in res.stderr
    assert "run 'papershelf recover': it keeps what the journal alone holds" in res.stderr
    assert snapshot_files(lib) == before


def test_recover_of_a_missing_library_file_without_backups_says_why_it_is_empty(lib):
    """It used to make an empty library without a word of why."""
    (store_dir(lib) / SNAPSHOT).unlink()
    journal = (store_dir(lib) / JOURNAL).read_bytes()
    res = run("recover", data_dir=lib)
    assert res.returncode == 0, res.stderr
    assert "was missing and there is no backup of it" in res.stdout
    assert "the papers it held cannot be brought back" in res.stdout
    assert "The library is empty: the journal held no paper added since the library file was last saved" in res.stdout
    copies = list(store_dir(lib).glob(JOURNAL + ".damaged-*"))
    assert len(copies) == 1 and copies[0].read_bytes() == journal
    assert f"Kept a copy of the journal as {copies[0]}" in res.stdout


def test_recover_of_a_missing_library_file_keeps_the_papers_added_since(lib, tmp_path):
    """Papers added after the library file was last saved live whole in the journal."""
    extra = tmp_path / "one.txt"
    shutil.copy(SEEDS[0], extra)
    with Library.open(lib) as library:
        before = set(library.ids())
    with Library.open(lib) as library:
        library.delete_papers(library.ids()[:5])
    with Library.open(lib, readonly=True) as library:
        deleted = before - set(library.ids())
    with Library.open(lib) as library:
        library.import_files([extra])  # the five deleted come back, as journal lines
        added = set(library.ids()) & deleted
    assert added
    (store_dir(lib) / SNAPSHOT).unlink()
    res = run("recover", data_dir=lib)
    assert res.returncode == 0, res.stderr
    assert "Kept what the journal alone holds" in res.stdout
    with Library.open(lib, readonly=True) as library:
        assert set(library.ids()) == added


def test_recover_of_a_library_file_of_zeros_runs_in_bounded_memory(lib):
    """Below the size limit, a file of zeros is damage: refused, and recover restores the
    backup, reading it a bounded line at a time (it used to read it whole and split it:
    four times its size in memory, a crash under this cap)."""
    with Library.open(lib) as library:
        library.compact()  # the generation-1 library file becomes a backup
    papers = set(saved_state(lib)[0])
    path = store_dir(lib) / SNAPSHOT
    path.unlink()
    with open(path, "wb") as f:
        f.truncate(200 * 2**20)
    res = run("list", data_dir=lib)
    assert res.returncode == 1 and "line 1 is damaged" in res.stderr, res.stderr
    cmd = [PRLIMIT, f"--as={640 * 2**20}", sys.executable, "-m", "papershelf", "--data-dir", str(lib), "recover"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Restored 372 papers" in res.stdout or set(saved_state(lib)[0]) == papers, res.stdout
    assert set(saved_state(lib)[0]) == papers
    for copy in lib.glob(SNAPSHOT + ".damaged-*"):
        copy.unlink()  # 200 MB of disk


def test_backups_that_is_not_a_folder_is_named_when_the_library_file_is_saved(lib):
    """Saving a new library file keeps the old one in backups/: a named pipe or a file
    there is named in words, and the library file stays as it was. A named pipe left
    where the new library file is written first (library.jsonl.tmp) is cleared away."""
    journal = store_dir(lib) / JOURNAL
    data = bytearray(journal.read_bytes())
    data[data.index(b"a saved note")] ^= 1  # damage: recover saves a new library file
    journal.write_bytes(bytes(data))
    os.mkfifo(store_dir(lib) / "backups")
    os.mkfifo(store_dir(lib) / (SNAPSHOT + ".tmp"))
    library_file = (store_dir(lib) / SNAPSHOT).read_bytes()
    res = run("recover", data_dir=lib)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert (
        f"Papershelf keeps backups of the library in {store_dir(lib) / 'backups'}, but that is a named pipe"
        in res.stderr
    )
    assert (store_dir(lib) / SNAPSHOT).read_bytes() == library_file
    assert not (store_dir(lib) / (SNAPSHOT + ".tmp")).exists()
    (store_dir(lib) / "backups").unlink()
    res = run("recover", data_dir=lib)
    assert res.returncode == 0 and "Lost 1 edit(s)" in res.stdout, res.stdout + res.stderr


WRITER = """
import sys
from papershelf.core.library import Library
for folder in sys.stdin:  # a folder to save for the first time, then say so
    with Library.open(folder.strip()) as lib:
        lib.compact()
    print("saved", flush=True)
"""


def test_a_reader_during_the_first_compaction_is_not_told_the_library_file_is_missing(tmp_path):
    """A new library (generation 0: no library file yet) saved for the first time while a
    reader (`list`, `search`: read-only) opens it: the reader saw no library file, then
    journal.last of generation 1, and refused it as a library whose file had vanished.
    It must read again instead. A race, so tried on many new libraries (before the fix
    about one in ten met it)."""
    from papershelf.core.errors import StoreCorruptError

    template = tmp_path / "template"
    with Library.open(template) as fresh:  # generation 0: a journal and journal.last
        fresh.import_files(SEEDS[:1])
    refusals = []
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    try:
        for i in range(150):
            folder = tmp_path / f"lib{i}"
            shutil.copytree(template, folder)
            writer.stdin.write(f"{folder}\n")
            writer.stdin.flush()
            while True:  # readers, as `papershelf list` opens, until it is saved
                try:
                    Library.open(folder, readonly=True).close()
                except StoreCorruptError as exc:
                    refusals.append(str(exc))
                    break
                if (folder / SNAPSHOT).exists():
                    break
            assert writer.stdout.readline() == "saved\n"
    finally:
        writer.communicate(timeout=TIMEOUT)  # closes its stdin (it ends) and stdout
    assert writer.returncode == 0
    assert refusals == []


@pytest.mark.parametrize("name", [SNAPSHOT, JOURNAL])
def test_the_window_does_not_tell_its_user_to_run_a_command_for_a_huge_store_file(lib, name, qtbot, settings):
    """The refusal of a 3 GB store file said "run 'papershelf recover'", shown as it was in
    the window's message box: a command the window's user has no reason to know."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    from papershelf.gui.app import open_library

    replace_with(store_dir(lib) / name, "sparse")
    seen: list[str] = []

    def answer():
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            seen.append(box.text() + "\n" + box.informativeText())
            box.buttons()[0].click()

    timer = QTimer()
    timer.timeout.connect(answer)
    timer.start(50)
    assert open_library(lib) is None
    timer.stop()
    assert "is 3.0 GB: no Papershelf" in seen[0] and str(store_dir(lib) / name) in seen[0]
    assert "papershelf recover" not in seen[0] and "open the library again" in seen[0]


@pytest.mark.parametrize("target", ["fifo", "zero"])
def test_a_link_where_the_new_library_file_is_written_first_is_cleared_away(lib, tmp_path, target):
    """library.jsonl.tmp as a symbolic link to a named pipe made `recover` (and every
    compaction) wait forever; to /dev/zero it failed with "could not write: Invalid
    argument" at every try. Papershelf's own temporary name: the link is removed (never
    what it points to) and the new library file written as a file."""
    journal = store_dir(lib) / JOURNAL
    data = bytearray(journal.read_bytes())
    data[data.index(b"a saved note")] ^= 1  # damage: recover saves a new library file
    journal.write_bytes(bytes(data))
    if target == "fifo":
        os.mkfifo(tmp_path / "pipe")
        (store_dir(lib) / (SNAPSHOT + ".tmp")).symlink_to(tmp_path / "pipe")
    else:
        (store_dir(lib) / (SNAPSHOT + ".tmp")).symlink_to("/dev/zero")
    res = run("recover", data_dir=lib)
    assert res.returncode == 0 and "Lost 1 edit(s)" in res.stdout, res.stdout + res.stderr
    assert (store_dir(lib) / SNAPSHOT).is_file() and not (store_dir(lib) / SNAPSHOT).is_symlink()
    assert not os.path.lexists(store_dir(lib) / (SNAPSHOT + ".tmp"))
    assert target == "zero" or (tmp_path / "pipe").is_fifo()
    assert run("list", data_dir=lib).returncode == 0


# ---- the library's small files beside the store: settings, hand tags, saved searches ----


@pytest.mark.parametrize("kind", ["fifo", "zero", "huge"])
def test_the_small_files_beside_the_store_never_hang_or_fill_memory(lib, tmp_path, kind):
    """hand-tags.json, saved-searches.json and settings.json were read with read_bytes: a named
    pipe there hung `tag`, `search --saved` and every command run without --data-dir."""

    def odd(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "zero":
            path.symlink_to("/dev/zero")
        else:
            with open(path, "wb") as f:
                f.truncate(3 * 2**30)  # sparse: costs no disk

    first = Library.open(lib, readonly=True).ids()[0]
    odd(lib / "hand-tags.json")
    odd(lib / "saved-searches.json")
    tagged = run("tag", first, "--add", "odd-neighbour", data_dir=lib)
    assert tagged.returncode == 0 and "Traceback" not in tagged.stderr, tagged.stderr
    searched = run("search", "--saved", "anything", data_dir=lib)
    assert "Traceback" not in searched.stderr and searched.returncode in (1, 2), searched.stderr
    assert "saved-searches.json" in searched.stderr, searched.stderr
    assert "not a file" in searched.stderr or "larger than 16 MB" in searched.stderr, searched.stderr

    config = tmp_path / "config"
    odd(config / "settings.json")
    cmd = [PRLIMIT, f"--as={AS_LIMIT}", sys.executable, "-m", "papershelf", "list"]
    env = {**os.environ, "PAPERSHELF_CONFIG_DIR": str(config)}
    env.pop("PAPERSHELF_DATA_DIR", None)
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env)
    assert res.returncode != 0 and "Traceback" not in res.stderr, res.stderr
    assert f"Cannot read the settings file {config / 'settings.json'}" in res.stderr, res.stderr
