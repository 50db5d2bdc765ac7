"""Rendered export entries kept on this machine, so an export renders only what changed.

Rendering an entry is the export's cost (an abstract through `plain_text` and the dialect's
LaTeX: about 0.15 ms a paper, 15 s at 100,000 papers), and an entry depends on nothing but the
paper's record, its key and the format: an export keeps each entry it rendered under a digest of
exactly that (the paper's stored dict as the store holds it, its key, what else the entry was
made from, the format, `ENTRY_VERSION`, the store's `SCHEMA_VERSION` and Papershelf's version),
and the next one copies the entry instead of rendering it. An edited paper's digest changes, so it
is rendered again, alone; an entry made from other papers too (BibTeX's xdata fields) is never
kept.

An export of the whole library also keeps its list of digests in export order (`manifest`), and,
once it is known to have written the library exactly as the store files are on disk (no key
pinned, no file changed since the open: exporting.py), what the export said and the stat keys of
those files (`exports`). An export of the same library with the same options then writes the kept
entries in that order without opening the library at all (`KeptExport`).

The cache's size is bounded: an export of the whole library drops the entries it did not use; an
export of part of it, when the format's entries then outnumber `bound` (twice the library's papers
and `SPARE` more), drops the oldest kept entries that neither it nor the last whole export used.

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
import secrets
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from ... import __version__
from ..paper import Paper
from ..store.format import SCHEMA_VERSION

log = logging.getLogger(__name__)

CACHE_NAME = "exports.sqlite3"  # in this machine's folder for the library
ENTRY_VERSION = 1  # raised whenever what an export writes changes (an entry, the head, separators, order)
BATCH = 2_000  # rows fetched (and new entries written) at a time
# the paper's fields no exporter reads (bibtex.py, ris.py, controls.py): the reader's own state
UNREAD = frozenset(("added", "updated", "status", "rating", "notes", "reading_at", "read_at", "opened_at"))
_TIMEOUT_S = 0.5  # another export writing the cache: render rather than wait
SPARE = 1_000  # entries kept beyond twice the library's papers (see `bound`)

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
CREATE TABLE IF NOT EXISTS manifest (
    kind TEXT NOT NULL, pos INTEGER NOT NULL, digest BLOB NOT NULL, PRIMARY KEY (kind, pos)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS exports (kind TEXT PRIMARY KEY, inputs TEXT NOT NULL, said TEXT NOT NULL);
"""


def _versions() -> str:
    """What the kept entries were made by: the exporters, the store's records, Papershelf."""
    return f"{ENTRY_VERSION} {SCHEMA_VERSION} {__version__}"


def bound(papers: int) -> int:
    """The entries of one format an export leaves in the cache at most, for a library of `papers`
    (the whole library's, an edited paper's older entry while it may come back, and `SPARE`)."""
    return 2 * papers + SPARE


class EntryCache:
    """The entries of one export format (`kind`: "bibtex", "biblatex", "ris") kept in the
    SQLite file `path`; None renders everything (no cache)."""

    def __init__(self, path: Path | None, kind: str, limit: int | None = None) -> None:
        self.path = path
        self.kind = kind
        self.limit = limit  # `bound` of the library's size: an export of part of it prunes past it
        # the versions too: an entry is never read by the exporters of another version
        self._salt = f"{kind}\0{_versions()}\0".encode()
        self.manifest = ""  # the token of the manifest the last `entries` kept (an export of everything)
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
        self.manifest = ""
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
                self.manifest = _keep_manifest(db, self.kind, digests)
            elif self.limit is not None:
                _bound(db, self.kind, self.limit)
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
        db.execute("DELETE FROM manifest")
        db.execute("DELETE FROM exports")
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


def _keep_manifest(db: sqlite3.Connection, kind: str, digests: Sequence[bytes | None]) -> str:
    """Keep the digests of an export of the whole library, in order, as `kind`'s manifest (the
    export it described is forgotten until `seal`), and return its token; "" when an entry is
    never kept (made from other papers: such an export is always rendered)."""
    db.execute("DELETE FROM exports WHERE kind = ?", (kind,))
    db.execute("DELETE FROM manifest WHERE kind = ?", (kind,))
    db.execute("DELETE FROM about WHERE name = ?", (f"manifest {kind}",))
    if any(d is None for d in digests):
        return ""
    db.execute("INSERT INTO manifest SELECT ?, pos, digest FROM wanted", (kind,))
    # which export's manifest this is: `seal` keeps what an export said only beside its own
    token = secrets.token_hex(8)
    db.execute("INSERT INTO about VALUES (?, ?)", (f"manifest {kind}", token))
    return token


def _bound(db: sqlite3.Connection, kind: str, limit: int) -> None:
    """After an export of part of the library: past `limit` entries of `kind`, drop the oldest
    kept ones (the lowest rowids: a kept entry is written once) that neither this export nor the
    manifest of the last whole export uses."""
    (count,) = db.execute("SELECT count(*) FROM entries WHERE kind = ?", (kind,)).fetchone()
    if count <= limit:
        return
    db.execute(
        "DELETE FROM entries WHERE rowid IN (SELECT rowid FROM entries WHERE kind = ?1"
        " AND digest NOT IN (SELECT digest FROM wanted WHERE digest IS NOT NULL)"
        " AND digest NOT IN (SELECT digest FROM manifest WHERE kind = ?1) ORDER BY rowid LIMIT ?2)",
        (kind, count - limit),
    )


def seal(cache: EntryCache, inputs: str, said: Mapping[str, Any]) -> None:
    """Say that the manifest `cache` just kept is the export of the library whose store files
    have the stat keys `inputs` (JSON), and what that export said (`said`: its report's findings,
    the file's head); `KeptExport` repeats it while the files stay as they are."""
    if not cache.manifest or cache.path is None:
        return
    try:
        db = sqlite3.connect(cache.path, timeout=_TIMEOUT_S, isolation_level=None)
        try:
            # only beside this export's own manifest: another export may have replaced it since
            db.execute(
                "INSERT OR REPLACE INTO exports SELECT ?, ?, ? WHERE (SELECT value FROM about WHERE name = ?) = ?",
                (cache.kind, inputs, orjson.dumps(said).decode(), f"manifest {cache.kind}", cache.manifest),
            )
        finally:
            db.close()
    except sqlite3.Error as exc:
        log.info("export cache %s: the export was not kept whole: %s", cache.path, exc)


class KeptExport:
    """The kept export of the whole library in one format (see `seal`), when the store files are
    still as it found them (`inputs`) and every entry of its manifest is still kept; else
    `said` is None. `pieces(sep)` then yields its entries in order, joined by `sep`."""

    def __init__(self, path: Path, kind: str, inputs: str) -> None:
        self.said: dict[str, Any] | None = None
        self._db: sqlite3.Connection | None = None
        self.kind = kind
        if not path.is_file():
            return
        try:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error:
            return
        try:
            db.execute("BEGIN")  # one snapshot: what is counted here is what `pieces` reads
            row = db.execute("SELECT value FROM about WHERE name = 'versions'").fetchone()
            kept = db.execute("SELECT inputs, said FROM exports WHERE kind = ?", (kind,)).fetchone()
            if row is None or row[0] != _versions() or kept is None or kept[0] != inputs:
                raise LookupError("no export of the library as it is")
            (wanted,) = db.execute("SELECT count(*) FROM manifest WHERE kind = ?", (kind,)).fetchone()
            (found,) = db.execute(
                "SELECT count(*) FROM manifest m JOIN entries e ON e.digest = m.digest WHERE m.kind = ?", (kind,)
            ).fetchone()
            said = orjson.loads(kept[1])
            if wanted != found or not isinstance(said, dict) or said.get("entries") != wanted:
                raise LookupError("an entry of the kept export is gone")
        except (sqlite3.Error, LookupError, ValueError) as exc:
            log.debug("export cache %s: no kept export: %s", path, exc)
            db.close()
            return
        self._db, self.said = db, said

    def readable(self) -> bool:
        """Whether every entry of the kept export reads (its text is read through once; the counts
        above are answered from the digests' index alone)."""
        assert self._db is not None
        try:
            self._db.execute(
                "SELECT sum(length(e.text)) FROM manifest m JOIN entries e ON e.digest = m.digest WHERE m.kind = ?",
                (self.kind,),
            ).fetchone()
        except sqlite3.Error as exc:
            log.info("export cache: the kept export does not read: %s", exc)
            return False
        return True

    def pieces(self, sep: str) -> Iterator[str]:
        """The kept entries in export order, `BATCH` at a time, joined (and preceded after the
        first batch) by `sep`, as the export's `Rendering` joins them."""
        db = self._db
        assert db is not None
        rows = db.execute(
            "SELECT e.text FROM manifest m JOIN entries e ON e.digest = m.digest WHERE m.kind = ? ORDER BY m.pos",
            (self.kind,),
        )
        started = False
        while batch := rows.fetchmany(BATCH):
            yield (sep if started else "") + sep.join([text for (text,) in batch])
            started = True

    def close(self) -> None:
        """Let go of the cache."""
        if self._db is not None:
            self._db.close()
            self._db = None
