"""The library file's format: sealed lines, the header, and reading, writing
and salvaging a whole library file; the names of the files in a library folder.

A library file is a header line, one line per paper (in the order they
joined the library), one per reading list, and an end line with the counts.
Each line is ``<json>\\t<crc32 hex>\\n`` ("sealed"), as journal lines are,
so a flipped bit in any field is found when the file is read.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import gc
import itertools
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from ..dedupe import FINGERPRINT_VERSION
from ..errors import StoreCorruptError, StoreUnreadableError, StoreVersionError
from ..fileio import synced_file
from ..paper import STATUS_VALUES, Paper
from .files import LIBRARY_FILE_MAX_BYTES, LINE_MAX_BYTES, open_store_reader

# 2: every line of the library file carries a CRC-32, as journal lines do (1: plain JSON lines)
# 3: a paper may carry its bibliographic record (entrytype, bibfields, preamble); a schema-2
#    record is a schema-3 one without it, so it needs no conversion, but the file is rewritten
#    at the first open for writing (Store.open) so that an older Papershelf refuses it instead
#    of meeting journal edits of fields it does not know
# 4: a paper may carry when it became Reading and Read (reading_at, read_at); absent means
#    unknown, so again no conversion, and the same rewrite at the first open for writing (a
#    schema-3 Papershelf would call a journal edit of them damage and offer to recover it away)
# 5: a paper may carry its files and when one was last opened (files, opened_at); as for 4
SCHEMA_VERSION = 5
SNAPSHOT = "library.jsonl"
JOURNAL = "journal.jsonl"
LOCK = "library.lock"
# Readers hold it shared while they read the library file and the journal; a
# compaction holds it exclusively while it swaps the two (see locks.swap_lock).
READ_LOCK = "library.readlock"
# The generation and sequence number of the last edit made durable, written
# after each journal line is synced: a journal that later ends before that
# edit lost lines that were saved (cut short, emptied or deleted), which its
# own lines cannot show when the cut falls between two of them.
MARK = "journal.last"
# Our own temporary files, left behind only by a process killed while writing.
TEMP_SUFFIXES = (".tmp", ".restore")
BACKUPS = "backups"
# a shared library (several devices): each device's files are in DEVICES/<device id>/
DEVICES = "devices"
# the keys of a device library file's merge-state lines, and where read_snapshot hands them over
SYNC_KEYS = frozenset({"smeta", "gone", "slist", "orphan"})
SYNC_LINES = "_sync_lines"
FORMAT_NAME = "papershelf-library"

# Migrations from an older schema, one per step: {from_version: function(record) -> record},
# applied to every line of an older library file as it is read (it is written back in the
# current schema at the next compaction).
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}

# The fields whose values many papers share (one import's time stamps, the listing a batch
# came from, a venue, area, status or tag): the load keeps one string for each value
# (`_share`), not one per paper: 36 MB less at 100,000 papers for 0.1 s of the load's CPU.
# Authors are left out: 12 MB more at 0.1 s more. Strings are immutable, so which object
# a paper holds changes nothing it reads or writes.
SHARED_TEXT = ("added", "updated", "venue", "area", "subarea", "status", "entrytype", "reading_at", "read_at")
SHARED_LISTS = ("tags",)
SHARED_SOURCE = ("file", "format")


def now_iso() -> str:
    """The current time in UTC, to the second, as ISO 8601 (the library's time stamps)."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def seal(body: bytes) -> bytes:
    """One line of the library file or the journal: ``<json>\\t<crc32 hex>\\n``."""
    return body + b"\t" + b"%08x" % zlib.crc32(body) + b"\n"


def unseal(line: bytes) -> bytes | None:
    """The JSON of a whole sealed line (newline included), or None if it fails its checksum."""
    if len(line) < 11 or line[-1] != 10 or line[-10] != 9:
        return None
    body = line[:-10]
    if b"%08x" % zlib.crc32(body) != line[-9:-1]:
        return None
    return body


def write_snapshot(
    path: Path,
    papers: dict[str, Paper],
    lists: dict[str, list[str]],
    generation: int,
    seq: int,
    fingerprint_version: int = FINGERPRINT_VERSION,
    header_extra: dict[str, Any] | None = None,
    extra_lines: Iterable[dict[str, Any]] = (),
) -> None:
    """Write a whole library file at `path` (a temporary name: the caller renames it
    into place) and fsync it. Raises OSError as it came. A device's library file of a
    shared library adds its merge state: `header_extra` in the header, `extra_lines`
    (replica.py) after the lists."""
    header = {
        "format": FORMAT_NAME,
        "schema_version": SCHEMA_VERSION,
        "generation": generation,
        "journal_seq": seq,
        "fingerprint_version": fingerprint_version,
        "saved": now_iso(),
        "papers": len(papers),
        "lists": len(lists),
        **(header_extra or {}),
    }
    dumps = orjson.dumps
    with synced_file(path, buffering=1 << 20) as f:
        f.write(seal(dumps(header)))
        chunk: list[bytes] = []
        for paper in papers.values():
            chunk.append(seal(dumps(paper.raw())))
            if len(chunk) >= 2000:
                f.write(b"".join(chunk))
                chunk.clear()
        if chunk:
            f.write(b"".join(chunk))
        for name, ids in lists.items():
            f.write(seal(dumps({"list": name, "ids": ids})))
        more: list[bytes] = []
        for extra in extra_lines:
            more.append(seal(dumps(extra)))
            if len(more) >= 2000:
                f.write(b"".join(more))
                more.clear()
        f.write(b"".join(more))
        # the end line repeats what recovery needs if the header is the damaged line
        f.write(
            seal(
                dumps(
                    {
                        "end": True,
                        "papers": len(papers),
                        "lists": len(lists),
                        "generation": generation,
                        "journal_seq": seq,
                    }
                )
            )
        )


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many containers.

    Loading 100,000 papers allocates 100,000 dicts and their lists; each
    automatic collection would walk all of them again (measured: load 1.8 s
    with collections, the rest is linear). Nothing built here has cycles.

    `gc.freeze()` afterwards moves *every* object the collector tracks out of
    its sight, garbage too: a closed library (it and its index refer to each
    other, so only the collector frees it) frozen with the next one was never
    freed, 99 MB per open of a 30,000-paper library (41 read-only opens and
    closes in one process: 4.1 GB). So what is garbage is collected first,
    and only a build that completed is frozen (a failed load's remains are
    left to the collector).
    """
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    built = False
    try:
        yield
        built = True
    finally:
        # What was built lives as long as the library: moved out of the
        # collector's sight, it is not walked again by every later collection.
        # Store.close() gives it back (gc.unfreeze), so nothing outlives it.
        if built:
            gc.freeze()
        if was_enabled:
            gc.enable()


Snapshot = tuple[dict[str, Paper], dict[str, list[str]], dict[str, Any]]


def read_snapshot(path: Path, backup_dir: Path | None = None, what: str = "library file") -> Snapshot:
    """(papers, lists, header) from a snapshot file (`what`: "library file" or
    "backup", for messages), or StoreCorruptError; StoreOddFileError for what is
    not a file or larger than any library file."""
    with gc_paused():
        return _read_snapshot(path, backup_dir, what)


def _read_snapshot(path: Path, backup_dir: Path | None, what: str) -> Snapshot:
    corrupt = partial(_corrupt_error, path, backup_dir, what)
    with _open_snapshot(path, what) as f:
        header = _read_header_line(f, path, corrupt)
        papers, lists, end = _read_records(f, header, corrupt)
        if end is None:
            raise corrupt(f"it ends after {len(papers)} papers without its end mark (it was cut short)")
        if end.get("papers") != len(papers) or end.get("lists") != len(lists):
            raise corrupt(f"it holds {len(papers)} papers but says {end.get('papers')}")
    return papers, lists, header


def damaged_line_error(path: Path, backup_dir: Path | None, lineno: int) -> StoreCorruptError:
    """The load's error for a line of the library file whose checksum fails (the read view's
    reader says it in the same words)."""
    return _corrupt_error(path, backup_dir, "library file", f"line {lineno} is damaged (its checksum does not match)")


def _corrupt_error(path: Path, backup_dir: Path | None, what: str, detail: str) -> StoreCorruptError:
    """The error for a damaged library file (or backup), with what `recover` would do."""
    # imported here, on the error path only: backups reads library files with this module
    from .backups import latest_good_backup

    backup = latest_good_backup(backup_dir) if backup_dir else None
    advice = (
        f" Run 'papershelf recover': it keeps every intact line of the file, takes what is "
        f"missing from the latest good backup ({backup}) and replays the journal on top."
        if backup
        else " Run 'papershelf recover' to keep every intact line of it (no backup that can be read was found)."
    )
    return StoreCorruptError(
        f"The {what} {path} cannot be read: {detail}. Papershelf has not changed it.{advice}", path, backup
    )


def _open_snapshot(path: Path, what: str) -> BinaryIO:
    try:
        return open_store_reader(path, what, LIBRARY_FILE_MAX_BYTES)
    except OSError as exc:
        raise StoreUnreadableError(
            f"Papershelf cannot read the {what} {path}: {exc.strerror or exc}. The file was not "
            "changed; check its permissions, or whether another program holds it.",
            path,
        ) from exc


def _read_header_line(f: BinaryIO, path: Path, corrupt: Callable[[str], StoreCorruptError]) -> dict[str, Any]:
    """The file's header, of a schema this Papershelf reads."""
    # every line read with a bound: a file of zeros (no newline) is not read whole into memory
    header = _parse_header(f.readline(LINE_MAX_BYTES + 1))
    if header is None:
        raise corrupt(
            "line 1 is damaged: it is not a whole Papershelf header with a matching "
            "checksum (the file is damaged or not a library)"
        )
    version = header["schema_version"]
    if version > SCHEMA_VERSION:
        raise StoreVersionError(
            f"The library file {path} was written by a newer Papershelf (schema {version}; this one "
            f"reads up to {SCHEMA_VERSION}). Update Papershelf to open it; nothing was changed.",
            path,
        )
    return header


def _read_records(
    f: BinaryIO, header: dict[str, Any], corrupt: Callable[[str], StoreCorruptError]
) -> tuple[dict[str, Paper], dict[str, list[str]], dict[str, Any] | None]:
    """The papers, lists and end line after the header (a device's merge-state lines go
    into the header, under SYNC_LINES)."""
    version = header["schema_version"]
    sealed = version >= 2
    papers: dict[str, Paper] = {}
    lists: dict[str, list[str]] = {}
    end: dict[str, Any] | None = None
    sync_lines: list[dict[str, Any]] = []
    header[SYNC_LINES] = sync_lines
    migrations = [MIGRATIONS[v] for v in range(version, SCHEMA_VERSION) if v in MIGRATIONS]
    wrap = Paper.wrap_trusted
    share = _share
    shared: dict[str, str] = {}
    statuses = STATUS_VALUES
    loads = orjson.loads
    crc32 = zlib.crc32
    lineno = 1
    # the hot loop of every start: 100,000 iterations, kept lean on purpose (a bounded
    # readline through partial costs what `for line in f` does; a lambda cost 0.1 s more)
    for line in iter(partial(f.readline, LINE_MAX_BYTES + 1), b""):
        lineno += 1
        if len(line) > LINE_MAX_BYTES:
            raise corrupt(f"line {lineno} is longer than any Papershelf record ({LINE_MAX_BYTES // 2**20} MB)")
        if end is not None:
            if line.strip():
                raise corrupt(f"there is data after the end mark (line {lineno})")
            continue
        if sealed:
            # inline unseal: a checksum per line finds a flipped bit in any field
            body = memoryview(line)[:-10]  # no copy of the line
            if len(line) < 11 or line[-1] != 10 or line[-10] != 9 or b"%08x" % crc32(body) != line[-9:-1]:
                raise corrupt(
                    f"line {lineno} is damaged (its checksum does not match"
                    + (")" if line.endswith(b"\n") else "; the file was cut short there)")
                )
            line = body  # type: ignore[assignment]  # orjson reads a memoryview as it reads bytes
        try:
            rec = loads(line)
            if migrations:
                for migrate in migrations:
                    rec = migrate(rec)
            pid = rec.get("id")
            if pid is None:
                end = _other_record(rec, lists, sync_lines)
                continue
            if pid.__class__ is not str or rec.get("status", "unread") not in statuses:
                raise ValueError("a paper record needs a string id and a known status")
            share(rec, shared)
            papers[pid] = wrap(rec)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise corrupt(f"line {lineno} is damaged ({exc})") from exc
    return papers, lists, end


def _share(rec: dict[str, Any], shared: dict[str, str]) -> None:
    """Make `rec`'s values of the SHARED_ fields the strings in `shared` (one object per
    value over the load; a value met first is added). Anything not a string is left as it is."""
    one = shared.setdefault
    for name in SHARED_TEXT:
        if name in rec:
            value = rec[name]
            if value.__class__ is str:
                rec[name] = one(value, value)
    for name in SHARED_LISTS:
        values = rec.get(name)
        if values.__class__ is list:
            rec[name] = [one(v, v) if v.__class__ is str else v for v in values]
    sources = rec.get("sources")
    if sources.__class__ is list:
        for source in sources:
            if source.__class__ is dict:
                for name in SHARED_SOURCE:
                    value = source.get(name)
                    if value.__class__ is str:
                        source[name] = one(value, value)


def _other_record(
    rec: dict[str, Any], lists: dict[str, list[str]], sync_lines: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """A line of the library file that is not a paper: a reading list (into `lists`), a
    device's merge state (into `sync_lines`), or the end line (returned; else None)."""
    if "list" in rec:
        lists[_check_list_name(rec["list"])] = _check_ids(rec["ids"])
    elif rec.get("end"):
        return rec
    elif SYNC_KEYS.intersection(rec):
        sync_lines.append(rec)  # a device's merge state (replica.py)
    else:
        raise ValueError("unknown record")
    return None


def _parse_header(line: bytes) -> dict[str, Any] | None:
    """The header of a library file (either schema), or None if it is damaged."""
    body = unseal(line)
    sealed = body is not None
    try:
        header = orjson.loads(line if body is None else body)
    except ValueError:
        return None
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        return None
    version = header.get("schema_version")
    if (
        not isinstance(version, int)
        or version < 1
        or ((version >= 2) != sealed and version <= SCHEMA_VERSION)
        or not isinstance(header.get("generation"), int)
        or not isinstance(header.get("journal_seq", 0), int)
    ):
        return None
    return header


def _check_list_name(name: object) -> str:
    if not isinstance(name, str):
        raise ValueError("a reading list needs a name")
    return name


def _check_ids(ids: object) -> list[str]:
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ValueError("a reading list's ids must be strings")
    return ids


@dataclass
class SnapshotSalvage:
    """What could be read of a damaged library file, line by line."""

    header: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    papers: dict[str, Paper] = field(default_factory=dict)
    lists: dict[str, list[str]] = field(default_factory=dict)
    # file order of paper lines: ("p", id) for an intact one, ("d", line, id or None) for a damaged one
    order: list[tuple[Any, ...]] = field(default_factory=list)
    damaged_lines: list[int] = field(default_factory=list)  # line numbers
    damaged_lists: list[str] = field(default_factory=list)  # names read from damaged list lines
    sync_lines: list[dict[str, Any]] = field(default_factory=list)  # a device's merge state (replica.py)
    cut_short: bool = False  # the last line has no newline, or the end line is missing


_ID_IN_LINE = re.compile(rb'"id":"([0-9a-f]{6,64})"')
_LIST_IN_LINE = re.compile(rb'\{"list":"((?:[^"\\]|\\.){1,400})"')


def salvage_snapshot(path: Path) -> SnapshotSalvage:
    """Every intact line of a damaged library file; damaged lines noted with their place."""
    out = SnapshotSalvage()
    with open_store_reader(path, "library file", LIBRARY_FILE_MAX_BYTES) as f:
        lines = _bounded_lines(f, out)
        first = next(lines, None)
        out.header = _parse_header(first + b"\n") if first is not None else None
        if first is not None and out.header is None:
            out.damaged_lines.append(1)
        ahead: list[bytes] = []
        if out.header is not None:
            sealed = out.header["schema_version"] >= 2
        else:  # guess the schema from the lines themselves
            for line in lines:
                ahead.append(line)
                if len(ahead) >= 49 or sum(map(len, ahead)) > LINE_MAX_BYTES:
                    break
            sealed = any(unseal(line + b"\n") is not None for line in ahead)
        _salvage_lines(out, itertools.chain(ahead, lines), sealed)
    if out.end is None:
        out.cut_short = True
    return out


def _bounded_lines(f: BinaryIO, out: SnapshotSalvage) -> Iterator[bytes]:
    """The lines of `f` without their newlines, each cut at LINE_MAX_BYTES (the rest of a
    longer one is skipped: it is damage either way), so that a file of zeros or junk is
    never held whole in memory; `out.cut_short` if the last has no newline."""
    readline = partial(f.readline, LINE_MAX_BYTES + 1)
    for chunk in iter(readline, b""):
        if chunk.endswith(b"\n"):
            yield chunk[:-1]
            continue
        if len(chunk) <= LINE_MAX_BYTES:
            out.cut_short = True  # the end of the file, without a newline
            yield chunk
            return
        for rest in iter(readline, b""):  # skip the rest of an overlong line
            if rest.endswith(b"\n"):
                break
        else:
            out.cut_short = True
        yield chunk


def _salvage_lines(out: SnapshotSalvage, lines: Iterator[bytes], sealed: bool) -> None:
    for lineno, line in enumerate(lines, start=2):
        if _take_record(out, unseal(line + b"\n") if sealed else line):
            continue
        if not line.strip():
            continue
        out.damaged_lines.append(lineno)
        # a damaged newline merges two or more whole lines into one: every part
        # that still carries its own matching checksum is kept as it was saved
        for part, whole in whole_lines_in(line) if sealed else [(line, None)]:
            if _take_record(out, whole):
                continue
            found = _ID_IN_LINE.findall(part)
            if found:
                out.order.extend(("d", lineno, pid.decode()) for pid in found)
                continue
            m = _LIST_IN_LINE.search(part)
            if m:
                try:
                    out.damaged_lists.append(orjson.loads(b'"' + m.group(1) + b'"'))
                except ValueError:
                    out.damaged_lists.append("")
                continue
            out.order.append(("d", lineno, None))


_SEAL_IN_LINE = re.compile(rb"\t[0-9a-f]{8}")


def _sealed_parts(line: bytes) -> list[tuple[bytes, bool]]:
    """A damaged line cut after each ``\\t<crc>`` seal inside it, skipping the
    one byte that took the place of the newline; (part, could be whole) pairs.
    A raw tab appears in a sealed line only before its checksum (JSON escapes
    tabs), so these are the only places one saved line can have ended."""
    parts: list[tuple[bytes, bool]] = []
    start = 0
    for m in _SEAL_IN_LINE.finditer(line):
        if m.start() < start:
            continue
        parts.append((line[start : m.end()], True))
        start = m.end() + 1
    if start < len(line):
        parts.append((line[start:], False))
    return parts


_OBJECT_START = re.compile(rb'\{"')


def whole_lines_in(line: bytes) -> list[tuple[bytes, bytes | None]]:
    """A damaged line as (part, JSON of the whole saved line it is, or None).

    A part that ends in a seal but fails it may still end with a whole saved
    line whose newline, and the end of the line before it, were overwritten:
    the first object start from which the rest passes its checksum begins it
    (a start inside a line's JSON cannot pass that line's checksum)."""
    out: list[tuple[bytes, bytes | None]] = []
    for part, sealed_end in _sealed_parts(line):
        body = unseal(part + b"\n") if sealed_end else None
        if body is None and sealed_end:
            for m in _OBJECT_START.finditer(part, 1):
                tail = unseal(part[m.start() :] + b"\n")
                if tail is not None:
                    out.append((part[: m.start()], None))
                    part, body = part[m.start() :], tail
                    break
        out.append((part, body))
    return out


def _take_record(out: SnapshotSalvage, body: bytes | None) -> bool:
    """Add one intact library-file line to `out`; False if it is not one."""
    if body is None:
        return False
    try:
        rec = orjson.loads(body)
    except ValueError:
        return False
    if not isinstance(rec, dict):
        return False
    try:
        if isinstance(rec.get("id"), str):
            out.papers[rec["id"]] = Paper.from_dict(rec)
            out.order.append(("p", rec["id"]))
            return True
        if "list" in rec:
            out.lists[_check_list_name(rec["list"])] = _check_ids(rec["ids"])
            return True
        if SYNC_KEYS.intersection(rec):
            out.sync_lines.append(rec)
            return True
        if rec.get("end") is True and isinstance(rec.get("papers"), int):
            out.end = rec
            return True
    except (ValueError, TypeError, KeyError, AttributeError):
        pass
    return False
