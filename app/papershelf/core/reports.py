"""What an import did, told from its per-file reports, without Qt.

An import gives one report per file (`library.FileReport`). A file that only
partly looks like a listing is held back for a preview ("unconfirmed"); the
rest are imported at once. These functions sort the reports into those two,
add up what they did, and write the details a person reads when some files,
or parts of them, could not be imported.

They take any object with a report's fields (`ImportOutcome`), so that this
module needs nothing from the facade.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from .paper import Paper

SHOWN_PROBLEMS = 50
"""Problems listed per file in the details; the rest are counted."""


class ImportOutcome(Protocol):
    """The fields of one file's import report these functions read."""

    @property
    def added(self) -> int:
        """New papers the file added."""

    @property
    def merged(self) -> int:
        """Papers of the file merged into ones already in the library."""

    @property
    def error(self) -> str:
        """Why the file could not be imported at all ("" if it could)."""

    @property
    def problems(self) -> Sequence[object]:
        """What in the file was skipped; each reads as a line."""

    @property
    def unconfirmed(self) -> Sequence[str]:
        """The titles held back until the file is confirmed as a listing."""

    def summary(self) -> str:
        """One line: the file and what importing it did."""


R = TypeVar("R", bound=ImportOutcome)


def held_back(reports: Iterable[R]) -> tuple[list[R], list[R]]:
    """The reports of files held back for a preview, and the rest, each in the order given."""
    unsure: list[R] = []
    sure: list[R] = []
    for r in reports:
        (unsure if r.unconfirmed else sure).append(r)
    return unsure, sure


def totals(reports: Iterable[ImportOutcome]) -> tuple[int, int]:
    """How many papers the files added, and how many they merged into ones already there."""
    added = merged = 0
    for r in reports:
        added += r.added
        merged += r.merged
    return added, merged


def _is_note(problem: object) -> bool:
    return bool(getattr(problem, "note", False))


def had_trouble(reports: Iterable[ImportOutcome]) -> bool:
    """Whether a file imported at once could not be read, or had parts skipped."""
    return any((r.error or any(not _is_note(p) for p in r.problems)) and not r.unconfirmed for r in reports)


def had_notes(reports: Iterable[ImportOutcome]) -> bool:
    """Whether everything was imported but something was changed on the way that
    the user must hear of (a citation key that was taken, missing or unusable)."""
    return any(any(_is_note(p) for p in r.problems) and not r.unconfirmed for r in reports)


def problem_details(reports: Iterable[ImportOutcome], shown: int = SHOWN_PROBLEMS) -> str:
    """Each file's summary with its problems under it (at most `shown` each,
    then how many more): the details of the "finished with problems" message."""
    lines: list[str] = []
    for r in reports:
        lines.append(r.summary())
        for p in r.problems[:shown]:
            lines.append(f"    {p}")
        if len(r.problems) > shown:
            lines.append(f"    … and {len(r.problems) - shown} more")
    return "\n".join(lines)


# ---- merges and possible duplicates (issue 13 item 4) ------------------------------------
class MergeOutcome(Protocol):
    """The fields of one file's import report `merge_details` reads."""

    @property
    def path(self) -> str:
        """The file."""

    @property
    def merges(self) -> Sequence[object]:
        """Each entry merged into a paper; each reads as a line naming both keys."""


def merge_count(reports: Iterable[MergeOutcome]) -> int:
    """How many entries the files merged into papers (told with both keys)."""
    return sum(len(r.merges) for r in reports)


def merge_details(reports: Iterable[MergeOutcome], shown: int = SHOWN_PROBLEMS) -> str:
    """Each file's merges, one line each (at most `shown` a file, then how many more):
    which entry, by its key in the file, went into which paper, by its key and id, and why."""
    lines: list[str] = []
    for r in reports:
        if not r.merges:
            continue
        lines.append(f"{r.path}: {len(r.merges)} merged")
        lines += [f"    {m}" for m in r.merges[:shown]]
        if len(r.merges) > shown:
            lines.append(f"    … and {len(r.merges) - shown} more")
    return "\n".join(lines)


PAIR_FIELDS = ("id", "citekey", "entrytype", "title", "authors", "year", "venue", "doi", "arxiv_id", "sources")
"""What a possible duplicate shows of each paper, side by side, in this order."""

_LABELS = {"id": "id", "citekey": "key", "entrytype": "type", "arxiv_id": "arXiv", "doi": "DOI"}


def pair_field(paper: Paper, name: str) -> str:
    """One field of a paper as a possible duplicate shows it."""
    if name == "authors":
        return "; ".join(paper.authors)
    if name == "sources":
        return ", ".join(dict.fromkeys(s.file.rsplit("/", 1)[-1] for s in paper.sources))
    if name == "entrytype":
        return f"@{paper.entrytype}" if paper.entrytype else ""
    value = getattr(paper, name)
    return "" if value is None else str(value)


def pair_label(name: str) -> str:
    """A field's name as a possible duplicate shows it."""
    return _LABELS.get(name, name)


def pair_lines(a: Paper, b: Paper, reason: str, width: int = 44) -> list[str]:
    """Two papers side by side, one field a line (a `*` where they differ), under why they
    may be one paper."""
    lines = [f"{a.id} and {b.id}: {reason}"]
    for name in PAIR_FIELDS:
        left, right = pair_field(a, name), pair_field(b, name)
        if not left and not right:
            continue
        mark = " " if left == right else "*"
        cut = left if len(left) <= width else left[: width - 1] + "…"
        lines.append(f" {mark} {pair_label(name):<7} {cut:<{width}} | {right}")
    return lines
