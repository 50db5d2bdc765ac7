"""The round trip of a real RIS file through Papershelf: how many of its tag lines come back.

`records(text)` reads a RIS file's records as their lines, (tag, value) in order, by rules of
its own rather than the importer's: a line "XX  - value" is a tag line, any other line that is
not blank goes on the value before it (a wrapped value: its lines joined by "\\n"), a record runs
from TY to ER (ER and its value included), and lines outside a record belong to none; values
lose trailing white space only. `round_trip(path, folder)` imports the file with the real
command into a fresh library, exports it as RIS with the real command and returns the
`Figures`: per record, the (tag, value) pairs of the original that the export holds, counted as
a multiset. Run as a script, it prints the table for tests/fixtures/public/ris/::

    .venv/bin/python tests/ris_roundtrip.py
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from conftest import run_cli

PUBLIC = Path(__file__).parent / "fixtures" / "public" / "ris"
_TAG_LINE = re.compile(r"^([A-Z][A-Z0-9])  -(?: (.*))?$")

Record = list[tuple[str, str]]


def records(text: str) -> list[Record]:
    """The records of a RIS text, each its (tag, value) lines in order."""
    out: list[Record] = []
    current: Record | None = None
    for raw in text.replace("\r\n", "\n").split("\n"):
        line = raw.rstrip()
        if not line.strip():
            continue
        m = _TAG_LINE.match(line)
        if m is None:
            if current:
                tag, value = current[-1]
                current[-1] = (tag, value + "\n" + line)
            continue
        tag, value = m.group(1), (m.group(2) or "").rstrip()
        if tag == "TY":
            current = [(tag, value)]
            out.append(current)
        elif current is not None:
            current.append((tag, value))
            if tag == "ER":
                current = None
    return out


@dataclass
class Figures:
    """One file's round trip: its tag lines, and those the export holds."""

    name: str
    records: int
    exported: int
    lines: int
    kept: int

    @property
    def share(self) -> float:
        return self.kept / self.lines if self.lines else 1.0


def kept_lines(original: list[Record], exported: list[Record]) -> int:
    """The (tag, value) pairs of the original's records that the export's record in the same
    place holds, each counted as often as both have it."""
    return sum(sum((Counter(a) & Counter(b)).values()) for a, b in zip(original, exported, strict=False))


def round_trip(path: Path, folder: Path) -> tuple[Figures, list[Record], list[Record]]:
    """Import `path` into a new library in `folder`, export it as RIS: the figures, and the
    records of the original and of the export."""
    data_dir, out = folder / "library", folder / "out.ris"
    res = run_cli("import", str(path), data_dir=data_dir)
    assert res.returncode == 0, res.stdout + res.stderr
    res = run_cli("export", "--format", "ris", "-o", str(out), data_dir=data_dir)
    assert res.returncode == 0, res.stdout + res.stderr
    original = records(path.read_text(encoding="utf-8-sig"))
    exported = records(out.read_bytes().decode("utf-8"))
    lines = sum(len(r) for r in original)
    figures = Figures(path.name, len(original), len(exported), lines, kept_lines(original, exported))
    return figures, original, exported


def table(rows: list[Figures]) -> str:
    """The figures as a table, with the total."""
    out = [f"{'file':<40} {'records':>7} {'lines':>6} {'back':>6} {'share':>7}"]
    for f in rows:
        out.append(f"{f.name:<40} {f.records:>7} {f.lines:>6} {f.kept:>6} {f.share:>7.1%}")
    lines, kept = sum(f.lines for f in rows), sum(f.kept for f in rows)
    out.append(f"{'all':<40} {sum(f.records for f in rows):>7} {lines:>6} {kept:>6} {kept / lines:>7.1%}")
    return "\n".join(out)


if __name__ == "__main__":
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, path in enumerate(sorted(PUBLIC.glob("*.ris"))):
            rows.append(round_trip(path, Path(tmp) / str(n))[0])
    print(table(rows))
    sys.exit(0)
