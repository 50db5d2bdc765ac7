"""The journal: edits since the library file, one sealed line each.

A journal line is ``{"seq": N, "gen": G, "ops": [...]}\\t<crc32 hex>\\n``:
the edit's sequence number, the generation of the library file it applies
to, and its operations (`Op`). Appending one fsynced line costs a fraction
of a millisecond at any library size.

A torn last line (the process died mid-write) fails its checksum and is
dropped: that edit was never reported as saved. A bad line with good lines
after it is damage, not a torn write, and stops the load with an error
naming the file. `recover` replays every line that can be read instead and
says which edits were lost (`JournalSalvage`).

The functions that take a `Store` read and set its journal bookkeeping; the
Store calls them while it loads and opens.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import StoreCorruptError, StoreUnreadableError
from ..fileio import fsync_dir, synced_file
from ..paper import EDITABLE_FIELDS, STATUS_VALUES, Paper, encode_field
from .files import JOURNAL_MAX_BYTES, open_store_file, open_store_reader
from .format import JOURNAL, MARK, seal, whole_lines_in
from .locks import store_write_error

if TYPE_CHECKING:
    from .store import Store

log = logging.getLogger("papershelf.core.store")  # one logger for the package


@dataclass(slots=True)
class Op:
    """One change to the state. kind: add | set | del | list | rename; `sync`: a device's
    action in a shared library, (Action, fine operations) (replica.py)."""

    kind: str
    key: str  # paper id or list name
    value: Any = None  # Paper (add), {field: JSON value} (set), [ids] or None (list), new name (rename)

    @classmethod
    def set_fields(cls, paper_id: str, changes: dict[str, Any]) -> Op:
        """Set fields given as Python values (Status, Source...)."""
        return cls("set", paper_id, {k: encode_field(k, v) for k, v in changes.items()})

    def encode(self) -> list[Any]:
        """The op as it is written in a journal line: [kind, key, JSON value]."""
        if self.kind == "add":
            return ["add", self.key, self.value.raw()]
        return [self.kind, self.key, self.value]


def decode_op(raw: list[Any]) -> Op:
    """The op of a journal line's [kind, key, value]; ValueError if it is not a valid one."""
    kind, key, value = raw
    if not isinstance(key, str):
        raise ValueError("an edit names a paper or list by a string")
    if kind == "add":
        if not isinstance(value, dict):
            raise ValueError("an added paper must be an object")
        return Op("add", key, Paper.from_dict(value))
    if kind == "set":
        if not isinstance(value, dict):
            raise ValueError("changed fields must be an object")
        bad = set(value) - EDITABLE_FIELDS
        if bad:
            raise ValueError(f"unknown fields {sorted(bad)}")
        if "status" in value and value["status"] not in STATUS_VALUES:
            raise ValueError(f"unknown status {value['status']!r}")
        return Op("set", key, value)
    if kind == "del" and value is None:
        return Op(kind, key, value)
    if kind == "list" and (value is None or (isinstance(value, list) and all(isinstance(i, str) for i in value))):
        return Op(kind, key, value)
    if kind == "rename" and isinstance(value, str):
        return Op(kind, key, value)
    raise ValueError(f"unknown operation {kind!r}")


def decode_line(record: dict[str, Any]) -> list[Op]:
    """The ops of a journal line: a device's line of a shared library (it names its device)
    is one `sync` op holding its action and fine operations (replica.py)."""
    if "dev" in record:
        from .replica import parse_action  # replica imports this module

        return [Op("sync", record["dev"], parse_action(record))]
    return [decode_op(raw) for raw in record["ops"]]


def journal_line(payload: dict[str, Any]) -> bytes:
    """One sealed journal line of `payload` ({"seq", "gen", "ops"})."""
    return seal(orjson.dumps(payload))


def parse_journal_line(line: bytes) -> dict[str, Any] | None:
    """The record of a journal line (without its newline), or None if its checksum
    or its shape is wrong."""
    body, sep, crc = line.rpartition(b"\t")
    if not sep or b"%08x" % zlib.crc32(body) != crc:
        return None
    try:
        record = orjson.loads(body)
    except ValueError:
        return None
    if not isinstance(record, dict) or "seq" not in record or "ops" not in record:
        return None
    return record


def _check_record(record: dict[str, Any]) -> None:
    """A journal line whose checksum is right but whose shape is not (a bug, or
    a hand edit) is reported as damage like any other, never a traceback."""
    if (
        type(record.get("seq")) is not int
        or type(record.get("gen", 0)) is not int
        or not isinstance(record.get("ops"), list)
    ):
        raise ValueError("its sequence number, generation or edits have the wrong type")


def journal_generations(path: Path) -> list[int]:
    """The generations named by a journal's intact lines (for a library file whose header is lost)."""
    try:
        with open_store_reader(path, "journal", JOURNAL_MAX_BYTES) as f:
            data = f.read()
    except OSError:
        return []
    gens: list[int] = []
    for line in data.split(b"\n"):
        record = parse_journal_line(line)
        if record is not None and type(record.get("gen", 0)) is int:
            gens.append(record.get("gen", 0))
    return gens


def missing_library_evidence(path: Path, mark: tuple[int, int] | None) -> str:
    """What shows that a library file existed, in words ("" if nothing does): journal
    lines or a journal.last of a generation after 0 (only a compaction, which writes
    the library file, starts one). journal.last, written after every journal line
    and compaction, answers without reading the journal when it is there."""
    if mark is not None and mark[0] == 0:
        return ""
    lines = [gen for gen in journal_generations(path) if gen > 0]
    if lines:
        return f"the journal {path} holds {len(lines)} edit(s) made to it"
    if mark is not None:
        return f"{path.with_name(MARK)} records that a library file was saved"
    return ""


def replay_journal(store: Store, salvage: JournalSalvage | None = None) -> bool:
    """Apply the journal's edits to `store`; False if it holds edits of a newer
    library file than the one `store` read.

    Without `salvage`, any damaged line stops the load with an error: a
    complete (newline-ended) line that fails its checksum is damage, not
    a torn write, wherever it is. Only an unfinished last line (no
    newline: the process died mid-write, so the edit was never reported
    as saved) is dropped. With `salvage`, every line whose checksum is
    good and whose base still applies is replayed, and the rest are
    written down in `salvage`.
    """
    store._valid_journal_len = 0
    store._journal_bytes = 0
    store._journal_fix_newline = False
    store.dropped_torn_line = False
    data = _read_journal(store.journal_path)
    if data is None:
        return True
    lines, tail = _journal_lines(store, data)
    store._journal_current_lines = 0
    replay = _Replay(store, salvage, len(lines))
    numbered = list(enumerate(lines, start=1))
    if salvage is not None:
        numbered = _split_merged_lines(numbered)
    for lineno, line in numbered:
        if not replay.line(lineno, line):
            return False
    replay.settle_damaged_at_end()
    if tail:
        store.dropped_torn_line = True  # a write cut short by a crash: never acknowledged
        log.info(
            "the unfinished last line of %s (%d bytes) was a save cut short; dropped", store.journal_path, len(tail)
        )
    pos = replay.pos
    if store._journal_fix_newline:
        pos -= 1  # the newline still has to be written
    store._valid_journal_len = pos
    store._journal_bytes = pos
    return True


def _read_journal(path: Path) -> bytes | None:
    """The journal's bytes (None: there is no journal)."""
    try:
        with open_store_reader(path, "journal", JOURNAL_MAX_BYTES) as f:
            data: bytes = f.read()
            return data
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreUnreadableError(
            f"Papershelf cannot read the journal {path} ({exc.strerror}); it was not changed. Check its permissions.",
            path,
        ) from exc


def _journal_lines(store: Store, data: bytes) -> tuple[list[bytes], bytes]:
    """The journal's newline-ended lines, and what follows the last newline (b"" for a
    whole file). A whole edit whose newline alone is missing or damaged is kept as a
    line, and the store told to write its newline."""
    lines = data.split(b"\n")
    tail = lines.pop()
    if tail:
        whole = tail if parse_journal_line(tail) is not None else tail[:-1]
        if parse_journal_line(whole) is not None:
            lines.append(whole)
            store._journal_fix_newline = True
            tail = b""
    return lines, tail


def _read_line(line: bytes) -> tuple[dict[str, Any], list[Op]] | str:
    """A journal line's record and ops, or what is wrong with it, in words."""
    record = parse_journal_line(line)
    if record is None:
        return "its checksum does not match"
    try:
        _check_record(record)
        return record, decode_line(record)
    except (KeyError, TypeError, ValueError) as exc:
        return f"Papershelf cannot read its edit ({exc})"


class _Replay:
    """One replay of a journal's lines onto a store, line by line."""

    def __init__(self, store: Store, salvage: JournalSalvage | None, count: int) -> None:
        self.store = store
        self.salvage = salvage
        self.count = count  # the journal's lines, for messages
        self.pos = 0  # the bytes of the journal read and good
        # A damaged line before the first line of the current generation may be
        # one already folded into the library file (a compaction stopped before
        # it emptied the journal): harmless if no edit of this generation is
        # missing, which the next intact line (or journal.last) tells.
        self.doubtful: list[tuple[int, bytes, str]] = []

    def line(self, lineno: int, line: bytes) -> bool:
        """Replay journal line `lineno`; False if it is an edit of a newer library file
        (and there is no salvage to note it in)."""
        store = self.store
        read = _read_line(line)
        if isinstance(read, str):
            if not store._journal_current_lines:
                self.doubtful.append((lineno, line, read))
            else:
                _journal_damage(store, self.salvage, self.count, lineno, line, read)
            return True
        record, ops = read
        gen = record.get("gen", 0)
        seq = record["seq"]
        self._settle_doubtful(gen, seq)
        if gen < store.generation or (gen == store.generation and seq <= store.seq):
            self.pos += len(line) + 1  # already folded into the library file
            return True
        if gen > store.generation:
            if self.salvage is None:
                return False
            self.salvage.other_generation(lineno, seq)
            return True
        self._apply(lineno, seq, ops)
        self.pos += len(line) + 1
        return True

    def _settle_doubtful(self, gen: int, seq: int) -> None:
        """An intact line after damaged ones: they were folded into the library file if it
        is of an older generation or the next edit of the current one; else damage."""
        if not self.doubtful:
            return
        store = self.store
        if gen < store.generation or (gen == store.generation and seq == store.seq + 1):
            log.info("journal lines %s were damaged but already folded into the library file", self._doubtful_lines())
        else:
            self._damage_doubtful()
        self.doubtful = []

    def _apply(self, lineno: int, seq: int, ops: list[Op]) -> None:
        """Apply edit `seq` of the current generation (a gap before it stops the load, or is
        noted when salvaging)."""
        store, salvage = self.store, self.salvage
        if seq != store.seq + 1:
            if salvage is None:
                raise StoreCorruptError(
                    f"The journal {store.journal_path} skips from edit {store.seq} to {seq} at line {lineno}. "
                    "Nothing was changed. Run 'papershelf recover' to keep every readable edit "
                    "and be told which were lost.",
                    store.journal_path,
                )
            salvage.gap(store.seq, seq)
        if salvage is not None:
            salvage.replay(store, lineno, seq, ops)
        else:
            for op in ops:
                store._apply_in_memory(op)
        store.seq = seq
        store._journal_current_lines += 1

    def settle_damaged_at_end(self) -> None:
        """Damaged lines at the end and none of this generation: harmless only if
        journal.last says no edit of this generation was saved."""
        if not self.doubtful:
            return
        store = self.store
        mark = store._read_mark()
        if mark is None or (mark[0] == store.generation and mark[1] > store.seq) or mark[0] > store.generation:
            self._damage_doubtful()
        else:
            log.info("journal lines %s were damaged but already folded into the library file", self._doubtful_lines())

    def _doubtful_lines(self) -> list[int]:
        return [d[0] for d in self.doubtful]

    def _damage_doubtful(self) -> None:
        for args in self.doubtful:
            _journal_damage(self.store, self.salvage, self.count, *args)


def _split_merged_lines(numbered: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
    """For recovery: a damaged line that holds whole saved lines (its newline,
    or the end of the line before, was overwritten) becomes those lines, each
    with the physical line number it was found on."""
    out: list[tuple[int, bytes]] = []
    for lineno, line in numbered:
        if parse_journal_line(line) is None:
            parts = whole_lines_in(line)
            if any(body is not None for _, body in parts):
                out.extend((lineno, part) for part, _ in parts if part)
                continue
        out.append((lineno, line))
    return out


def _journal_damage(
    store: Store, salvage: JournalSalvage | None, count: int, lineno: int, line: bytes, problem: str
) -> None:
    """A damaged journal line: written down when salvaging, else the load stops."""
    if salvage is not None:
        salvage.damaged(lineno, line, problem)
        return
    where = "its last line" if lineno == count else f"line {lineno}, with {count - lineno} more after it"
    raise StoreCorruptError(
        f"The journal {store.journal_path} is damaged at {where}: {problem}. The file is complete, "
        "so this is damage (a disk or copying fault), not an interrupted save; an edit saved "
        "there may be wrong or lost. Nothing was changed and nothing will be written until "
        "it is repaired: run 'papershelf recover' to keep every readable edit, set the "
        "damaged journal aside and be told exactly which edits were lost.",
        store.journal_path,
    )


def open_journal_for_append(store: Store) -> None:
    """Open the journal of `store` for appending after its last good line (the
    store has replayed it), mending a torn or unterminated end first."""
    path = store.journal_path
    try:
        existed = path.exists()
        fd = open_store_file(path, "journal", os.O_RDWR | os.O_CREAT)
        size = os.fstat(fd).st_size
        if store.dropped_torn_line:
            _keep_torn_tail(store, fd, size)
        if size and not store._journal_current_lines and not store._journal_fix_newline:
            # only lines folded into the library file already (a compaction stopped before
            # it emptied the journal): nothing in them is needed any more
            store._valid_journal_len = store._journal_bytes = 0
        if size != store._valid_journal_len or store._journal_fix_newline:
            # drop a torn tail so the next line starts clean; put back a damaged last newline
            os.ftruncate(fd, store._valid_journal_len)
            if store._journal_fix_newline:
                os.lseek(fd, 0, os.SEEK_END)
                os.write(fd, b"\n")
                store._valid_journal_len += 1
                store._journal_bytes += 1
                store._journal_fix_newline = False
            os.fsync(fd)
        os.lseek(fd, 0, os.SEEK_END)
        if not existed:
            fsync_dir(store.folder)  # a new journal's name must survive a power cut too
    except OSError as exc:
        raise store_write_error(exc, path) from exc
    store._journal_fd = fd


def _keep_torn_tail(store: Store, fd: int, size: int) -> None:
    """An unfinished last line is dropped, but its bytes are kept and the user told."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    target = store.folder / f"{JOURNAL}.unfinished-{stamp}"
    n = 1
    while target.exists():
        target = store.folder / f"{JOURNAL}.unfinished-{stamp}.{n}"
        n += 1
    tail = os.pread(fd, size - store._valid_journal_len, store._valid_journal_len)
    if not tail.strip(b"\0 \n"):
        return  # zeros a crash left past the end: nothing to keep
    with synced_file(target) as f:
        f.write(tail)
    fsync_dir(store.folder)
    store.notices.append(
        f"The last save before Papershelf stopped was cut short (the program or the computer "
        f"stopped while writing it); it had not been reported as saved, and was left out. "
        f"Its {len(tail)} bytes are kept in {target}."
    )


class JournalSalvage:
    """What `recover` replayed from a journal and what it could not."""

    def __init__(self) -> None:
        self.replayed = 0
        self.damaged_lines: list[tuple[int, int | None, str]] = []  # (line, seq it seems to have, what)
        self.missing: set[int] = set()  # sequence numbers never seen
        self.not_applied: list[tuple[int, int, str]] = []  # (line, seq, why)
        self.newer: list[int] = []  # lines of a newer library file

    @property
    def lost_anything(self) -> bool:
        """Whether any edit was not replayed."""
        return bool(self.damaged_lines or self.missing or self.not_applied or self.newer)

    def damaged(self, lineno: int, line: bytes, problem: str) -> None:
        """Journal line `lineno` is damaged (`problem`); note what it seems to have held."""
        seq, what = _describe_damaged_edit(line)
        self.damaged_lines.append((lineno, seq, what or problem))

    def other_generation(self, lineno: int, seq: int) -> None:
        """Journal line `lineno` belongs to a newer library file: not applied."""
        self.newer.append(lineno)

    def gap(self, last_seq: int, seq: int) -> None:
        """The journal skips from edit `last_seq` to `seq` (-1: the start is unknown)."""
        if last_seq >= 0:
            self.missing.update(range(last_seq + 1, seq))

    def replay(self, store: Store, lineno: int, seq: int, ops: list[Op]) -> None:
        """Apply what of edit `seq` (journal line `lineno`) still applies to `store`; note the rest."""
        applied = False
        for op in ops:
            why = None
            if op.kind == "set" and op.key not in store.papers:
                why = f"it changes paper {op.key}, which is not in the library"
            elif op.kind == "rename" and op.key not in store.lists:
                why = f"it renames the reading list {op.key!r}, which is not in the library"
            if why:
                self.not_applied.append((lineno, seq, why))
                continue
            store._apply_in_memory(op)
            applied = True
        self.replayed += applied

    def describe(self) -> list[str]:
        """What was lost or left out, one sentence per kind, for the recovery report."""
        out: list[str] = []
        shown: set[int] = set()
        lost: list[str] = []
        for lineno, seq, what in self.damaged_lines:
            if seq is not None and seq in self.missing:
                shown.add(seq)
                lost.append(f"edit {seq} (journal line {lineno}: {what})")
            else:
                lost.append(f"journal line {lineno} ({what})")
        lost += [f"edit {seq} (its line is missing)" for seq in sorted(self.missing - shown)]
        if lost:
            out.append(f"Lost {len(lost)} edit(s) that could not be read: " + "; ".join(lost) + ".")
        for lineno, seq, why in self.not_applied:
            out.append(f"Did not apply edit {seq} (journal line {lineno}): {why}.")
        if self.newer:
            out.append(
                f"Did not apply {len(self.newer)} edit(s) (journal lines {self.newer[0]}-{self.newer[-1]}) "
                "written for a newer library file than this one (as if an older library file had been "
                "put back by hand)."
            )
        return out


def _describe_damaged_edit(line: bytes) -> tuple[int | None, str]:
    """Best guess at what a damaged journal line held, for the report."""
    body = line.rpartition(b"\t")[0] or line
    try:
        record = orjson.loads(body)
    except ValueError:
        m = re.search(rb'"seq":(\d{1,12})', body)
        return (int(m.group(1)) if m else None), "unreadable"
    if not isinstance(record, dict):
        return None, "unreadable"
    seq = record.get("seq") if type(record.get("seq")) is int else None
    parts: list[str] = []
    raw_ops = record.get("ops")
    ops: list[Any] = raw_ops if isinstance(raw_ops, list) else []
    if "dev" in record:  # a shared library's line: one operation per field, tag or member
        ops = _coarse_ops(ops)
    for raw in ops[:3]:
        if isinstance(raw, list) and len(raw) == 3 and isinstance(raw[1], str):
            kind, key, value = raw
            if kind == "set" and isinstance(value, dict):
                fields = [f for f in value if f != "updated"] or ["the time stamp"]
                parts.append(f"set {', '.join(map(str, fields))} of paper {key}")
            elif kind == "add":
                parts.append(f"add paper {key}")
            elif kind == "del":
                parts.append(f"delete paper {key}")
            elif kind in ("list", "rename"):
                parts.append(f"change the reading list {key!r}")
    what = ("it seems to " + "; ".join(parts)) if parts else "unreadable"
    return seq, what


def _coarse_ops(ops: list[Any]) -> list[list[Any]]:
    """A shared library's fine operations as the coarse ones they came from, to name them."""
    out: list[list[Any]] = []
    for raw in ops:
        if not isinstance(raw, list) or len(raw) < 2 or not isinstance(raw[1], str):
            continue
        kind, key = raw[0], raw[1]
        if kind in ("f", "t", "F"):
            field = str(raw[2]) if kind == "f" and len(raw) > 2 else "tags" if kind == "t" else "files"
            if out and out[-1][0] == "set" and out[-1][1] == key:
                out[-1][2][field] = None
            else:
                out.append(["set", key, {field: None}])
        elif kind in ("a", "x"):
            out.append(["add" if kind == "a" else "del", key, None])
        elif kind in ("L", "m") and not (out and out[-1][0] == "list" and out[-1][1] == key):
            out.append(["list", key, None])
    return out
