"""Applying what was found online (`Library.apply_found`, issue 23): the one rule the window and
the command line both follow, so the same answer changes the same fields from either.

- A paper is changed only if it is still what the look-up read (`expect`, its stored record
  then): a paper edited since (here, on another device, by another process) is never
  overwritten with an answer about what it was. It is refused, and when the record found is
  given, re-proposed: the changes that record makes to the paper as it is now, for the user to
  review (never applied here).
- A paper deleted meanwhile is left deleted.
- A service's values are cleaned of control characters (and the caller told which), not
  refused: the user cannot remove them from an answer.
- A value the library refuses is left out, in words, and the paper's other values still made
  (one refused value never loses the rest).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..changes import Record
from ..errors import InvalidValueError

if TYPE_CHECKING:
    from ..online.records import FoundRecord, Proposal
    from .facade import Library

__all__ = ["FoundApplied", "apply_found"]

DELETED = "not applied: the paper was deleted meanwhile"
EDITED = "not applied: the paper was edited after the look-up read it"


@dataclass
class FoundApplied:
    """What `Library.apply_found` did, paper by paper."""

    applied: list[str] = field(default_factory=list)  # papers whose found values were made (all or some)
    gone: list[str] = field(default_factory=list)  # deleted meanwhile: left alone
    # edited since read: not applied; the changes the found record makes to the paper now
    # (editor field → (ours, found)), None when no record was given
    stale: dict[str, dict[str, tuple[str, str]] | None] = field(default_factory=dict)
    problems: dict[str, list[str]] = field(default_factory=dict)  # paper → the values refused, in words
    cleaned: dict[str, list[str]] = field(default_factory=dict)  # paper → found fields controls were removed from

    def note(self, paper_id: str) -> str:
        """What happened to this paper's found values, in words ("" when they were all made)."""
        from ..limits import CONTROLS_REMOVED

        if paper_id in self.gone:
            return DELETED
        if paper_id in self.stale:
            again = self.stale[paper_id]
            if again is None:
                return EDITED + "; run it again"
            if not again:  # the paper already says what was found (another device applied it)
                return EDITED + "; it already says what was found"
            return EDITED + "; what was found is proposed again against it as it is now"
        notes = []
        if paper_id in self.problems:
            taken = "not applied" if paper_id not in self.applied else "some values were not taken"
            notes.append(f"{taken}: {'; '.join(self.problems[paper_id])}")
        if paper_id in self.cleaned:
            notes.append(f"{CONTROLS_REMOVED} {', '.join(self.cleaned[paper_id])} of the found record")
        # each note a sentence, except a leading "not applied: …", which the callers show after
        # the paper's id (and settle() replaces the found message with)
        return ". ".join(
            n if i == 0 and n.startswith("not applied") else n[:1].upper() + n[1:] for i, n in enumerate(notes)
        )

    def settle(self, proposals: Iterable[Proposal]) -> None:
        """Tell each proposal applied what happened: `applied`, and its note (a paper not
        applied says why instead of what was found; a value cleaned or refused is added). A
        paper edited meanwhile is proposed again as it is now: its changes become the new ones,
        never automatic."""
        for proposal in proposals:
            pid = proposal.paper_id
            proposal.applied = pid in self.applied
            note = self.note(pid)
            again = self.stale.get(pid)
            if again is not None:
                proposal.changes, proposal.automatic = again, False
            if pid not in self.applied and (pid in self.gone or pid in self.stale or pid in self.problems):
                proposal.message = note  # why nothing was made, instead of what was found
            elif note:
                proposal.message = f"{proposal.message} {note}.".strip()


def apply_found(
    lib: Library,
    changes: Mapping[str, Mapping[str, str]],
    expect: Mapping[str, Record] | None = None,
    found: Mapping[str, FoundRecord | None] | None = None,
) -> FoundApplied:
    """Make what was found: `changes` maps a paper to editor field → the found text (see
    record_edit.py), `expect` a paper to its stored record when the look-up read it (a paper
    not in it is not checked), `found` a paper to the record found (to re-propose). See the
    module's rules. One durable edit per paper."""
    from ..limits import strip_found

    out = FoundApplied()
    for pid, wanted in changes.items():
        if not wanted:
            continue
        if pid not in lib:
            out.gone.append(pid)
            continue
        if expect is not None and pid in expect and lib.records([pid])[pid] != expect[pid]:
            out.stale[pid] = _proposed_again(lib, pid, (found or {}).get(pid))
            continue
        values, stripped = strip_found(dict(wanted))
        if stripped:
            out.cleaned[pid] = stripped
        made, problems = _edit_what_is_taken(lib, pid, values)
        if made:
            out.applied.append(pid)
        if problems:
            out.problems[pid] = problems
    return out


def _proposed_again(lib: Library, paper_id: str, rec: FoundRecord | None) -> dict[str, tuple[str, str]] | None:
    """The changes `rec` makes to the paper as it is now (None without a record)."""
    if rec is None:
        return None
    from ..online.lookup import changes_for

    return changes_for(lib.get(paper_id), rec)


def _edit_what_is_taken(lib: Library, paper_id: str, values: dict[str, str]) -> tuple[bool, list[str]]:
    """Edit the paper with these values as one change; when the library refuses one, find which
    (each alone) and make the others as one change. Returns whether anything was made and the
    refused values in words."""
    try:
        lib.edit_record(paper_id, values)
        return True, []
    except (InvalidValueError, ValueError):
        pass
    problems: list[str] = []
    taken: dict[str, str] = {}
    for name, value in values.items():
        try:
            _check_alone(lib, paper_id, name, value)
            taken[name] = value
        except (InvalidValueError, ValueError) as exc:
            problems.append(f"{name}: {exc}")
    if taken:
        try:
            lib.edit_record(paper_id, taken)
        except (InvalidValueError, ValueError) as exc:  # refused together only: said, nothing made
            return False, [*problems, str(exc)]
    return bool(taken), problems


def _check_alone(lib: Library, paper_id: str, name: str, value: str) -> None:
    """InvalidValueError if the library refuses this one value (nothing is written)."""
    from ..record_edit import field_changes
    from .editing import check_value

    check_value(name, value)
    field_changes(lib.get(paper_id), {name: value})
