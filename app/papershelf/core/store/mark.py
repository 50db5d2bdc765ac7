"""journal.last: the generation and number of the last edit made durable.

It is one sealed line, ``{"gen": G, "seq": S}\\t<crc32>\\n``, the numbers
padded to a fixed width so that rewriting it in place (after each journal
line is synced; not synced itself) always covers the line before. A mark
that fails its checksum, or is not exactly one such line, is damaged and
taken as absent: it only ever adds a check (a journal that ends before it
lost saved lines), and a damaged one must not invent losses. The first
writable open rewrites a damaged or old mark, so the check comes back.

Papershelf before 2026-12 wrote ``%20d %20d\\n`` without a checksum; such a
mark is still read as it is (and rewritten sealed at the first writable open).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import orjson

from .files import MARK_READ_BYTES, open_store_file
from .format import seal, unseal

WHAT = "journal mark"
_BODY = b'{"gen": %20d, "seq": %20d}'
_OLD = re.compile(rb"\A {0,19}\d{1,20} {1,20}\d{1,20}\n\Z")
_OLD_LENGTH = 42  # b"%20d %20d\n"


def mark_line(generation: int, seq: int) -> bytes:
    """The whole content of journal.last for the last durable edit `seq` of `generation`."""
    return seal(_BODY % (generation, seq))


def parse_mark(data: bytes) -> tuple[tuple[int, int] | None, bool]:
    """((generation, seq) or None if damaged, whether it is in the current sealed form)."""
    body = unseal(data) if data.endswith(b"\n") and data.count(b"\n") == 1 else None
    if body is not None:
        try:
            record = orjson.loads(body)
        except ValueError:
            return None, False
        if isinstance(record, dict) and set(record) == {"gen", "seq"}:
            gen, seq = record["gen"], record["seq"]
            if type(gen) is int and type(seq) is int and gen >= 0 and seq >= 0:
                return (gen, seq), True
        return None, False
    if len(data) == _OLD_LENGTH and _OLD.match(data):
        gen_text, seq_text = data.split()
        return (int(gen_text), int(seq_text)), False
    return None, False


def read_mark(path: Path) -> tuple[tuple[int, int] | None, bool]:
    """What journal.last at `path` says: ((generation, seq) or None, whether current).

    None when there is none, or it is damaged or unreadable. StoreOddFileError
    if it is not a file (a named pipe, a device, a folder)."""
    try:
        fd = open_store_file(path, WHAT)
    except OSError:  # none yet, or unreadable (permissions, I/O): as absent
        return None, False
    try:
        data = os.read(fd, MARK_READ_BYTES)
    except OSError:
        return None, False
    finally:
        os.close(fd)
    return parse_mark(data)


def open_mark_for_writing(path: Path) -> int:
    """journal.last opened for `write_mark` (StoreOddFileError, OSError)."""
    return open_store_file(path, WHAT, os.O_RDWR | os.O_CREAT)


def write_mark(fd: int, generation: int, seq: int, first: bool) -> None:
    """Rewrite journal.last in place (OSError as it came); the first write of an
    open also cuts off whatever an older or damaged mark left after the line."""
    line = mark_line(generation, seq)
    os.pwrite(fd, line, 0)
    if first:
        os.ftruncate(fd, len(line))
