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
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    report: list[str] = []
    aside: list[Path] = []

    def keep_aside(path: Path) -> None:
        target = path.with_name(f"{path.name}.damaged-{stamp}")
        n = 1
        while target.exists():
            target = path.with_name(f"{path.name}.damaged-{stamp}.{n}")
            n += 1
        try:
            shutil.copy2(path, target)  # a copy: the original goes only once the new file is saved
            fsync_dir(store.folder)
        except OSError as exc:
            raise store_write_error(exc, store.folder) from exc
        aside.append(target)

    # 1. the library file
    snapshot_damaged = False
    try:
        if store.snapshot_path.exists():
            store._read_snapshot(store.snapshot_path)
        else:
            store._refuse_if_library_file_vanished()
            store.start_empty()
    except StoreCorruptError:
        snapshot_damaged = True
        journal_gens = journal_generations(store.journal_path)
        report.extend(_salvage_library_file(store, journal_gens))
        if store.snapshot_path.exists():
            keep_aside(store.snapshot_path)

    # 2. the journal, on top
    salvage = JournalSalvage()
    mark = store._read_mark()
    replay_journal(store, salvage=salvage)
    if mark is not None and mark[0] == store.generation and mark[1] > store.seq and store.seq >= 0:
        salvage.missing.update(range(store.seq + 1, mark[1] + 1))  # saved, then cut off the end
    if salvage.replayed:
        report.append(f"Replayed {salvage.replayed} edit(s) from the journal on top.")
    report.extend(_with_titles(line, store.papers) for line in salvage.describe())
    if store.dropped_torn_line:
        report.append(
            "The journal ended in an unfinished save (never reported as saved); it was "
            "left out, and the journal is kept as it was (below)."
        )
    lost_file = snapshot_damaged and not store.snapshot_path.exists() and not store.backups()
    journal_damaged = bool(salvage.damaged_lines or salvage.newer or store.dropped_torn_line)
    if (journal_damaged or lost_file) and store.journal_path.exists():
        keep_aside(store.journal_path)

    # 3. save it all as a new library file (which empties the journal)
    # never let the generation of a journal set aside meet the new file's
    store.generation = max([store.generation, *journal_generations(store.journal_path)])
    store._compact(backup_current=not snapshot_damaged)
    for path in aside:
        name = path.name.split(".damaged-")[0]
        if name == store.journal_path.name and not journal_damaged:
            report.append(f"Kept a copy of the journal as {path}.")
        else:
            report.append(f"Kept the damaged {name} as {path}.")
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
    return "\n".join(report)


def _salvage_library_file(store: Store, journal_gens: list[int]) -> list[str]:
    """Rebuild the state from a damaged library file's intact lines and the latest good backup."""
    report: list[str] = []
    path = store.snapshot_path
    scan = salvage_snapshot(path) if path.exists() else SnapshotSalvage(cut_short=True)
    backup = latest_good_backup(store.backup_dir)
    bpapers: dict[str, Paper]
    blists: dict[str, list[str]]
    bheader: dict[str, Any] | None
    if backup is not None:
        bpapers, blists, bheader = read_snapshot(backup, None)
    else:
        bpapers, blists, bheader = {}, {}, None
    if not path.exists() and backup is None:
        # Nothing holds the papers of the lost file: keep what the journal alone holds
        # (recover was asked for; refusing would leave the library unusable for good),
        # with a copy of the journal, and say so.
        report.append(
            f"The library file {path} was missing and there is no backup of it in {store.backup_dir}: "
            "the papers it held cannot be brought back. Kept what the journal alone holds (papers "
            "added since the library file was last saved, and their edits)."
        )
        store.start_empty()
        store.generation, store.seq = (max(journal_gens), -1) if journal_gens else (_mark_generation(store), 0)
        return report
    if not scan.papers and not scan.lists and backup is None:
        raise StoreCorruptError(
            f"The library file {path} is damaged beyond use (no intact line) and there is no "
            "readable backup to restore from; the files were left as they are.",
            path,
        )
    papers = scan.papers
    lists = scan.lists
    meta = scan.header or scan.end
    if path.exists():
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
        report.append(f"Kept every intact line: {_n(len(papers), 'paper')} and {_n(len(lists), 'reading list')}.")
    else:
        report.append(f"The library file {path} was missing.")

    # Which papers of the backup belong where the damage is. Papers are
    # written in the order they joined the library, in every library file,
    # so a backup paper missing between two intact lines with no damage
    # between them was deleted since the backup, not lost.
    from_backup: list[str] = []
    border = list(bpapers)
    bpos = {pid: i for i, pid in enumerate(border)}
    named = [ev[2] for ev in scan.order if ev[0] == "d" and ev[2]]
    for pid in named:
        if pid in bpapers and pid not in papers:
            papers[pid] = bpapers[pid]
            from_backup.append(pid)
    expected = meta.get("papers") if meta else None
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
    if in_gap or scan.cut_short or not path.exists():
        gaps.append((prev, None))
    if expected is not None and len(papers) >= expected:
        gaps = []  # every paper the file held is accounted for
    for lo_id, hi_id in gaps:
        if lo_id is not None and lo_id not in bpos:
            continue  # joined after the backup: so did everything after it
        lo = bpos[lo_id] + 1 if lo_id is not None else 0
        hi = bpos.get(hi_id, len(border)) if hi_id is not None else len(border)
        for pid in border[lo:hi]:
            if pid not in papers:
                papers[pid] = bpapers[pid]
                from_backup.append(pid)
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
    # reading lists: written after the papers, so a cut file loses them first
    expected_lists = meta.get("lists") if meta else None
    restored_lists: list[str] = []
    if expected_lists is None or len(lists) < expected_lists:
        if scan.damaged_lists or scan.cut_short or expected_lists is None:
            for name, ids in blists.items():
                if name not in lists:
                    lists[name] = list(ids)
                    restored_lists.append(name)
    if restored_lists:
        report.append(
            f"Restored the reading list(s) {', '.join(map(repr, restored_lists))} from the "
            f"backup {backup}; changes made to them after it are lost."
        )
    if expected_lists is not None and len(lists) < expected_lists:
        report.append(f"Could not recover {expected_lists - len(lists)} reading list(s).")
    elif expected_lists is not None and len(lists) > expected_lists:
        report.append(
            f"{len(lists) - expected_lists} of the restored reading lists may have been "
            "deleted since the backup; delete them again if so."
        )

    # the generation the journal's edits were written against
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
    _take_state(store, papers, lists, meta)
    store.fingerprint_version = (scan.header or bheader or {}).get("fingerprint_version", 0)
    if store.sync is not None:
        # a device of a shared library: its merge state (what it had applied of every device,
        # the stamps of its papers' values) from the lines that read
        store.sync.bind(papers, lists)
        try:
            store.sync.load(scan.header or {}, scan.sync_lines)
        except (KeyError, TypeError, ValueError, IndexError):
            store.sync.load(scan.header or {}, [])
            report.append("Its merge state could not be read; the values' stamps start again.")
    return report


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
