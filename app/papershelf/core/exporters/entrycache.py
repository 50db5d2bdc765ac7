"""Rendered export entries kept on this machine, so an export renders only what changed.

Rendering an entry is the export's cost (an abstract through `plain_text` and the dialect's
LaTeX: about 0.15 ms a paper, 15 s at 100,000 papers), and an entry depends on nothing but the
paper's record, its key and the format: an export keeps each entry it rendered under a digest of
exactly that (the paper's stored dict as the store holds it, its key, what else the entry was
made from, the format, `ENTRY_VERSION` and Papershelf's version), and the next one copies the
entry instead of rendering it. An edited paper's digest changes, so it is rendered again, alone;
an entry made from other papers too (BibTeX's xdata fields) is never kept.

The entries live in one SQLite file in this machine's folder for the library (beside the search
index, never in the synced library folder): `exports.sqlite3`. The export's papers go into a
temporary table in export order, and one LEFT JOIN hands back each entry kept or a gap to
render, in that order, a batch at a time: the export streams, whatever the library's size. The
cache is only a cache: a file that cannot be opened, read or written (damaged, locked by a long
export elsewhere, a full disk) is left alone and the entries are rendered as if it were empty.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from ... import __version__
from ..paper import Paper

log = logging.getLogger(__name__)

CACHE_NAME = "exports.sqlite3"  # in this machine's folder for the library
ENTRY_VERSION = 1  # raised whenever an exporter's output changes for the same paper
BATCH = 2_000  # rows fetched (and new entries written) at a time
# the paper's fields no exporter reads (bibtex.py, ris.py, controls.py): the reader's own state
UNREAD = frozenset(("added", "updated", "status", "rating", "notes", "reading_at", "read_at", "opened_at"))
_TIMEOUT_S = 0.5  # another export writing the cache: render rather than wait

# an entry as kept: its text, the characters it wrote as "?" and whether it held control characters
Entry = tuple[str, int, int]
Render = Callable[[Paper], Entry]

# the digest is made with the kind (format) in it: one key finds the entry; `kind` says whose
# entries an export of the whole library may drop
_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    digest BLOB PRIMARY KEY, kind TEXT NOT NULL, text TEXT NOT NULL,
    replaced INTEGER NOT NULL, controls INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_kind ON entries (kind);
CREATE TABLE IF NOT EXISTS about (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _versions() -> str:
    return f"{ENTRY_VERSION} {__version__}"


class EntryCache:
    """The entries of one export format (`kind`: "bibtex", "biblatex", "ris") kept in the
    SQLite file `path`; None renders everything (no cache)."""

    def __init__(self, path: Path | None, kind: str) -> None:
        self.path = path
        self.kind = kind
        self._salt = kind.encode() + b"\0"
        # a BibTeX entry's key is given apart (the export that pins it renders what the next one
        # copies); a RIS record writes the pinned key as its ID
        self._unread = UNREAD if kind == "ris" else UNREAD | {"citekey"}
        self.hits = 0  # entries copied by the last `entries`
        self.rendered = 0  # entries rendered by it

    def digest(self, record: Mapping[str, Any], *made_from: str) -> bytes:
        """What this format's entry of a paper is made from, as 16 bytes: its stored dict `record`
        but the fields no exporter reads (`UNREAD`: pinning a key or setting a status re-renders
        nothing), and the strings given (its key, its `file` field). A field's change, even one
        back to its old value, only costs a render. SHA-256: the fastest of hashlib's here (the
        CPU's own instructions), 3 µs for a 2 kB paper with its JSON."""
        unread = self._unread
        read = {name: value for name, value in record.items() if name not in unread}
        parts = [self._salt, orjson.dumps(read)]
        parts += [b"\0" + text.encode("utf-8", "surrogatepass") for text in made_from]
        return hashlib.sha256(b"".join(parts)).digest()[:16]

    def _connect(self) -> sqlite3.Connection | None:
        if self.path is None:
            return None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=_TIMEOUT_S, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
            _check_versions(db)
            db.execute("CREATE TEMP TABLE wanted (pos INTEGER PRIMARY KEY, digest BLOB)")
            return db
        except (sqlite3.Error, OSError) as exc:
            log.info("export cache %s not used: %s", self.path, exc)
            return None

    def entries(
        self, papers: Sequence[Paper], digests: Sequence[bytes | None], render: Render, whole: bool = False
    ) -> Iterator[Entry]:
        """The entry of each paper, in order: kept ones copied, the others rendered by `render` (and
        kept, unless their digest is None). An export of the whole library (`whole`) then drops
        the entries it did not use: those of papers edited or removed since they were kept."""
        self.hits = self.rendered = 0
        db = self._connect()
        if db is None:
            yield from self._render_all(papers, 0, render)
            return
        try:
            yield from self._joined(db, papers, digests, render, whole)
        finally:
            db.close()

    def _render_all(self, papers: Sequence[Paper], start: int, render: Render) -> Iterator[Entry]:
        for paper in papers[start:]:
            self.rendered += 1
            yield render(paper)

    def _joined(
        self,
        db: sqlite3.Connection,
        papers: Sequence[Paper],
        digests: Sequence[bytes | None],
        render: Render,
        whole: bool,
    ) -> Iterator[Entry]:
        pos = 0
        try:
            db.execute("BEGIN")
            db.executemany("INSERT INTO wanted VALUES (?, ?)", enumerate(digests))
            rows = db.execute(
                "SELECT e.text, e.replaced, e.controls FROM wanted w"
                " LEFT JOIN entries e ON e.digest = w.digest ORDER BY w.pos"
            )
            new: list[tuple[bytes, str, str, int, int]] = []
            while batch := rows.fetchmany(BATCH):
                for row in batch:
                    if row[0] is not None:
                        self.hits += 1
                        yield row
                    else:
                        entry = render(papers[pos])
                        self.rendered += 1
                        digest = digests[pos]
                        if digest is not None:
                            new.append((digest, self.kind, *entry))
                        yield entry
                    pos += 1
                if len(new) >= BATCH:
                    _keep(db, new)
            _keep(db, new)
            if whole:
                _prune(db, self.kind, len(digests))
            db.execute("COMMIT")
        except sqlite3.Error as exc:  # damaged, locked, full: what is left is rendered
            log.info("export cache %s not used: %s", self.path, exc)
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            yield from self._render_all(papers, pos, render)


def _version_pattern() -> str:
    suffix = f"/{ENTRY_VERSION}/{__version__}"
    return "%" + suffix.replace("!", "!!").replace("%", "!%").replace("_", "!_")


def _check_versions(db: sqlite3.Connection) -> None:
    """Empty the cache made by another version of the exporters (its entries would never be read)."""
    row = db.execute("SELECT value FROM about WHERE name = 'versions'").fetchone()
    if row is None or row[0] != _versions():
        db.execute("BEGIN IMMEDIATE")
        db.execute("DELETE FROM entries")
        db.execute("INSERT OR REPLACE INTO about VALUES ('versions', ?)", (_versions(),))
        db.execute("COMMIT")


def _prune(db: sqlite3.Connection, kind: str, exported: int) -> None:
    """Drop the entries of `kind` not among the `wanted` ones (after an export of every paper: the
    others belong to papers edited or removed since)."""
    (count,) = db.execute("SELECT count(*) FROM entries WHERE kind = ?", (kind,)).fetchone()
    if count > exported:
        db.execute(
            "DELETE FROM entries WHERE kind = ? AND digest NOT IN (SELECT digest FROM wanted WHERE digest IS NOT NULL)",
            (kind,),
        )


def _keep(db: sqlite3.Connection, new: list[tuple[bytes, str, str, int, int]]) -> None:
    db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?)", new)
    new.clear()
