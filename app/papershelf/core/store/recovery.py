"""Recovery of a damaged library: keep every edit that can be read, and say
exactly what was lost.

The library file: every intact line is kept; papers and lists whose lines
are damaged or cut off are taken from the latest good backup. The journal:
every line whose checksum is good and whose base still applies is replayed
on top. Damaged files are kept beside the library with a `.damaged-<time>`
suffix, and the result is saved as a new library file.
"""

from __future__ import annotations

import datetime as _dt
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ReadOnlyLibraryError, StoreCorruptError
from ..fileio import fsync_dir
from ..paper import Paper
from .backups import latest_good_backup
from .format import SnapshotSalvage, read_snapshot, salvage_snapshot
from .journal import JournalSalvage, journal_generations, replay_journal
from .locks import store_write_error

if TYPE_CHECKING:
    from .store import Store


def _n(n: int, word: str) -> str:
    """ "1 paper", "2 papers" """
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def recover(store: Store) -> str:
    """Get back every edit that can be read, and say exactly what was lost.

    The library file: every intact line is kept; papers and lists whose
    lines are damaged or cut off are taken from the latest good backup.
    The journal: every line whose checksum is good and whose base still
    applies is replayed on top. Damaged files are kept beside the library
    with a `.damaged-<time>` suffix. Returns what was done, in words.
    """
    if store.readonly:
        raise ReadOnlyLibraryError(f"The library in {store.folder} was opened read-only.", store.folder)
    store.take_folder()
    try:
        store._remove_stale_temp_files()
        try:
            store._load()
            return "Nothing needed recovering: the library and its journal read cleanly."
        except StoreCorruptError:
            pass
        return _recover(store)
    finally:
        store.close()


def _recover(store: Store) -> str:
    """The stages of `recover` once the library did not load: the library file, the
    journal on top, then everything saved as a new library file."""
    aside = _SetAside(store.folder)
    snapshot_damaged, report = _read_library_file(store, aside)
    salvage = _replay_journal_on_top(store)
    report += _journal_report(store, salvage)
    lost_file = snapshot_damaged and not store.snapshot_path.exists() and not store.backups()
    journal_damaged = bool(salvage.damaged_lines or salvage.newer or store.dropped_torn_line)
    if (journal_damaged or lost_file) and store.journal_path.exists():
        aside.keep(store.journal_path)
    _save_anew(store, snapshot_damaged)
    report += _aside_report(store, aside.paths, journal_damaged)
    report += _result_report(store, lost_file)
    return "\n".join(report)


class _SetAside:
    """Copies of damaged files kept beside the library, `<name>.damaged-<time>`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
        self.paths: list[Path] = []

    def keep(self, path: Path) -> None:
        """Copy `path` aside under a name no file has yet."""
        target = path.with_name(f"{path.name}.damaged-{self.stamp}")
        n = 1
        while target.exists():
            target = path.with_name(f"{path.name}.damaged-{self.stamp}.{n}")
            n += 1
        try:
            shutil.copy2(path, target)  # a copy: the original goes only once the new file is saved
            fsync_dir(self.folder)
        except OSError as exc:
            raise store_write_error(exc, self.folder) from exc
        self.paths.append(target)


def _read_library_file(store: Store, aside: _SetAside) -> tuple[bool, list[str]]:
    """Stage 1: the library file, salvaged if it is damaged (set aside); whether it was
    damaged, and what the salvage did."""
    try:
        if store.snapshot_path.exists():
            store._read_snapshot(store.snapshot_path)
        else:
            store._refuse_if_library_file_vanished()
            store.start_empty()
    except StoreCorruptError:
        report = _salvage_library_file(store, journal_generations(store.journal_path))
        if store.snapshot_path.exists():
            aside.keep(store.snapshot_path)
        return True, report
    return False, []


def _replay_journal_on_top(store: Store) -> JournalSalvage:
    """Stage 2: every journal line that can be read and still applies; the rest noted."""
    salvage = JournalSalvage()
    mark = store._read_mark()
    replay_journal(store, salvage=salvage)
    if mark is not None and mark[0] == store.generation and mark[1] > store.seq and store.seq >= 0:
        salvage.missing.update(range(store.seq + 1, mark[1] + 1))  # saved, then cut off the end
    return salvage


def _journal_report(store: Store, salvage: JournalSalvage) -> list[str]:
    """What the journal's replay did and lost, in words."""
    report: list[str] = []
    if salvage.replayed:
        report.append(f"Replayed {salvage.replayed} edit(s) from the journal on top.")
    report.extend(_with_titles(line, store.papers) for line in salvage.describe())
    if store.dropped_torn_line:
        report.append(
            "The journal ended in an unfinished save (never reported as saved); it was "
            "left out, and the journal is kept as it was (below)."
        )
    return report


def _save_anew(store: Store, snapshot_damaged: bool) -> None:
    """Stage 3: save it all as a new library file (which empties the journal)."""
    # never let the generation of a journal set aside meet the new file's
    store.generation = max([store.generation, *journal_generations(store.journal_path)])
    store._compact(backup_current=not snapshot_damaged)


def _aside_report(store: Store, aside: list[Path], journal_damaged: bool) -> list[str]:
    """Where the copies set aside are."""
    report: list[str] = []
    for path in aside:
        name = path.name.split(".damaged-")[0]
        if name == store.journal_path.name and not journal_damaged:
            report.append(f"Kept a copy of the journal as {path}.")
        else:
            report.append(f"Kept the damaged {name} as {path}.")
    return report


def _result_report(store: Store, lost_file: bool) -> list[str]:
    """What the library holds now."""
    report: list[str] = []
    if lost_file and not store.papers:
        report.append(
            "The library is empty: the journal held no paper added since the library file was last "
            "saved. If you find the library file (or a copy of it), close Papershelf and put it back "
            f"as {store.snapshot_path}."
        )
    report.append(
        f"The library now holds {_n(len(store.papers), 'paper')} and "
        f"{_n(len(store.lists), 'reading list')}, saved as {store.snapshot_path}."
    )
    return report


@dataclass(slots=True)
class _Backup:
    """The latest good backup, read (empty: there is none)."""

    path: Path | None = None
    papers: dict[str, Paper] = field(default_factory=dict)
    lists: dict[str, list[str]] = field(default_factory=dict)
    header: dict[str, Any] | None = None


def _read_backup(store: Store) -> _Backup:
    path = latest_good_backup(store.backup_dir)
    if path is None:
        return _Backup()
    papers, lists, header = read_snapshot(path, None)
    return _Backup(path, papers, lists, header)


def _salvage_library_file(store: Store, journal_gens: list[int]) -> list[str]:
    """Rebuild the state from a damaged library file's intact lines and the latest good backup."""
    path = store.snapshot_path
    exists = path.exists()
    scan = salvage_snapshot(path) if exists else SnapshotSalvage(cut_short=True)
    backup = _read_backup(store)
    if not exists and backup.path is None:
        return _keep_journal_alone(store, journal_gens)
    if not scan.papers and not scan.lists and backup.path is None:
        raise StoreCorruptError(
            f"The library file {path} is damaged beyond use (no intact line) and there is no "
            "readable backup to restore from; the files were left as they are.",
            path,
        )
    meta = scan.header or scan.end
    report = _intact_lines_report(path, scan) if exists else [f"The library file {path} was missing."]
    report += _restore_papers(scan, backup, meta, exists)
    report += _restore_lists(scan, backup, meta)
    _set_journal_base(store, meta, journal_gens, backup.header)
    _take_state(store, scan.papers, scan.lists, meta)
    store.fingerprint_version = (scan.header or backup.header or {}).get("fingerprint_version", 0)
    report += _load_merge_state(store, scan)
    return report


def _keep_journal_alone(store: Store, journal_gens: list[int]) -> list[str]:
    """Nothing holds the papers of the lost file: keep what the journal alone holds
    (recover was asked for; refusing would leave the library unusable for good),
    with a copy of the journal, and say so."""
    store.start_empty()
    store.generation, store.seq = (max(journal_gens), -1) if journal_gens else (_mark_generation(store), 0)
    return [
        f"The library file {store.snapshot_path} was missing and there is no backup of it in {store.backup_dir}: "
        "the papers it held cannot be brought back. Kept what the journal alone holds (papers "
        "added since the library file was last saved, and their edits)."
    ]


def _intact_lines_report(path: Path, scan: SnapshotSalvage) -> list[str]:
    """Which lines of the library file were damaged, and what its intact lines held."""
    report: list[str] = []
    if scan.damaged_lines:
        shown = ", ".join(map(str, scan.damaged_lines[:10])) + (
            f" and {len(scan.damaged_lines) - 10} more" if len(scan.damaged_lines) > 10 else ""
        )
        report.append(f"The library file {path} has {len(scan.damaged_lines)} damaged line(s) (line {shown}).")
    if scan.cut_short:
        report.append(
            f"The library file {path} was cut short after line "
            f"{1 + len(scan.papers) + len(scan.lists) + len(scan.damaged_lines)}."
        )
    report.append(f"Kept every intact line: {_n(len(scan.papers), 'paper')} and {_n(len(scan.lists), 'reading list')}.")
    return report


def _restore_papers(scan: SnapshotSalvage, backup: _Backup, meta: dict[str, Any] | None, exists: bool) -> list[str]:
    """Take from the backup the papers that belong where the damage is (into `scan.papers`).

    Papers are written in the order they joined the library, in every library
    file, so a backup paper missing between two intact lines with no damage
    between them was deleted since the backup, not lost.
    """
    papers = scan.papers
    from_backup = _take_from_backup(papers, backup.papers, [ev[2] for ev in scan.order if ev[0] == "d" and ev[2]])
    expected = meta.get("papers") if meta else None
    if expected is None or len(papers) < expected:  # else every paper the file held is accounted for
        border = list(backup.papers)
        bpos = {pid: i for i, pid in enumerate(border)}
        for lo_id, hi_id in _gaps(scan, exists):
            from_backup += _take_from_backup(papers, backup.papers, _between(border, bpos, lo_id, hi_id))
    return _restored_papers_report(papers, from_backup, backup.path, expected)


def _take_from_backup(papers: dict[str, Paper], bpapers: dict[str, Paper], ids: list[str]) -> list[str]:
    """Put into `papers` those of `ids` the backup holds and `papers` lacks; their ids."""
    taken: list[str] = []
    for pid in ids:
        if pid in bpapers and pid not in papers:
            papers[pid] = bpapers[pid]
            taken.append(pid)
    return taken


def _gaps(scan: SnapshotSalvage, exists: bool) -> list[tuple[str | None, str | None]]:
    """The stretches of the file where papers may be missing: (the intact paper before,
    the intact paper after), None for the file's start or end."""
    gaps: list[tuple[str | None, str | None]] = []
    prev: str | None = None
    in_gap = False
    for ev in scan.order:
        if ev[0] == "p":
            if in_gap:
                gaps.append((prev, ev[1]))
                in_gap = False
            prev = ev[1]
        else:
            in_gap = True  # even a line whose id was read may hide others (a lost newline)
    if in_gap or scan.cut_short or not exists:
        gaps.append((prev, None))
    return gaps


def _between(border: list[str], bpos: dict[str, int], lo_id: str | None, hi_id: str | None) -> list[str]:
    """The backup's papers (`border`, in its order; `bpos`: their places) between two papers
    (none if the first joined after the backup: so did everything after it)."""
    if lo_id is not None and lo_id not in bpos:
        return []
    lo = bpos[lo_id] + 1 if lo_id is not None else 0
    hi = bpos.get(hi_id, len(border)) if hi_id is not None else len(border)
    return border[lo:hi]


def _restored_papers_report(
    papers: dict[str, Paper], from_backup: list[str], backup: Path | None, expected: int | None
) -> list[str]:
    """The papers taken from the backup, and how their count compares with the file's."""
    report: list[str] = []
    if from_backup:
        report.append(
            f"Restored {_n(len(from_backup), 'paper')} whose lines were damaged or missing from the backup "
            f"{backup}, as they were then; edits made to them after that backup are lost: "
            + "; ".join(_with_titles(f"paper {pid}", papers) for pid in from_backup[:20])
            + (" …" if len(from_backup) > 20 else "")
            + "."
        )
    if expected is not None and len(papers) < expected:
        report.append(
            f"Could not recover {_n(expected - len(papers), 'paper')}: their lines are damaged or "
            "missing and no backup holds them (they joined the library after the latest backup)."
        )
    if expected is not None and len(papers) > expected:
        report.append(
            f"{len(papers) - expected} of the restored papers may have been deleted since the backup; "
            "look them up by id and delete them again if so."
        )
    return report


def _restore_lists(scan: SnapshotSalvage, backup: _Backup, meta: dict[str, Any] | None) -> list[str]:
    """Reading lists are written after the papers, so a cut file loses them first: take
    the backup's lists the file lost (into `scan.lists`); what was done, in words."""
    lists = scan.lists
    expected = meta.get("lists") if meta else None
    restored: list[str] = []
    lost_some = expected is None or (len(lists) < expected and bool(scan.damaged_lists or scan.cut_short))
    if lost_some:
        for name, ids in backup.lists.items():
            if name not in lists:
                lists[name] = list(ids)
                restored.append(name)
    report: list[str] = []
    if restored:
        report.append(
            f"Restored the reading list(s) {', '.join(map(repr, restored))} from the "
            f"backup {backup.path}; changes made to them after it are lost."
        )
    if expected is not None and len(lists) < expected:
        report.append(f"Could not recover {expected - len(lists)} reading list(s).")
    elif expected is not None and len(lists) > expected:
        report.append(
            f"{len(lists) - expected} of the restored reading lists may have been "
            "deleted since the backup; delete them again if so."
        )
    return report


def _set_journal_base(
    store: Store, meta: dict[str, Any] | None, journal_gens: list[int], bheader: dict[str, Any] | None
) -> None:
    """The generation (and edit) the journal's edits were written against."""
    if meta is not None and isinstance(meta.get("generation"), int):
        store.generation = meta["generation"]
        store.seq = meta.get("journal_seq", 0) if isinstance(meta.get("journal_seq", 0), int) else 0
    elif journal_gens:
        store.generation, store.seq = max(journal_gens), -1  # -1: take the journal from its start
    elif bheader is not None:
        # the lost file came after the backup: its edits start where the backup's end
        store.generation, store.seq = bheader["generation"] + 1, bheader.get("journal_seq", 0)
    else:
        store.generation, store.seq = 1, 0


def _load_merge_state(store: Store, scan: SnapshotSalvage) -> list[str]:
    """A device of a shared library: its merge state (what it had applied of every device,
    the stamps of its papers' values) from the lines that read."""
    if store.sync is None:
        return []
    store.sync.bind(scan.papers, scan.lists)
    try:
        store.sync.load(scan.header or {}, scan.sync_lines)
    except (KeyError, TypeError, ValueError, IndexError):
        store.sync.load(scan.header or {}, [])
        return ["Its merge state could not be read; the values' stamps start again."]
    return []


def _take_state(
    store: Store, papers: dict[str, Paper], lists: dict[str, list[str]], header: dict[str, Any] | None
) -> None:
    """Make `papers` and `lists` the store's state; a shared library's merge state follows them
    (from the salvaged header's version vector, or from nothing), so the journal replays onto them."""
    store.papers, store.lists = papers, lists
    if store.sync is not None:
        last = store.sync.clock.last
        store.sync.bind(papers, lists)
        try:
            store.sync.load(header or {}, [])
        except (KeyError, TypeError, ValueError, IndexError):
            store.sync.load({}, [])
        store.sync.clock.last = max(last, store.sync.clock.last)


def _mark_generation(store: Store) -> int:
    """The generation journal.last names (at least 1: a library file existed)."""
    mark = store._read_mark()
    return max(1, mark[0]) if mark else 1


_PAPER_REF = re.compile(r"\bpaper ([0-9a-f]{6,64})\b")


def _with_titles(text: str, papers: dict[str, Paper]) -> str:
    """'paper 5fcd…' → 'paper 5fcd… (“Its title”)', so a person knows which paper it was."""

    def title(m: re.Match[str]) -> str:
        paper = papers.get(m.group(1))
        # getattr: Paper's fields are properties made at run time, which a type checker cannot see
        full: str = getattr(paper, "title", "")
        if paper is None or not full:
            return m.group(0)
        short = full if len(full) <= 60 else full[:59] + "…"
        return f"{m.group(0)} (\u201c{short}\u201d)"

    return _PAPER_REF.sub(title, text)
