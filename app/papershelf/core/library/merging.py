"""Possible duplicates: listing them, merging a pair by hand, keeping a pair apart.

`Library.duplicates` hands out a `Duplicates` (part of the facade: it uses the
library's private parts). A merge is one store operation (the kept paper takes
the combined fields, the other goes, reading lists follow), and hands back a
`Merged` that undoes and redoes it exactly. Which pairs a person kept apart is
remembered on both papers (`Paper.distinct`, an ordinary saved edit of the library).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..changes import Change, Record
from ..dedupe import combine
from ..duplicates import Pair, possible_duplicates
from ..errors import InvalidValueError
from ..paper import FIELDS, Paper, encode_field
from ..store import Op, now_iso
from .exporting import references_renamed

if TYPE_CHECKING:
    from .facade import Library

__all__ = ["Duplicates", "Merged", "Pair"]


@dataclass(slots=True)
class Merged:
    """What merging `gone` into `kept` did, to tell and to undo."""

    kept: str
    gone: str
    kept_key: str  # the citation key the merged paper has ("" if neither had one)
    lost_key: str  # the other's key, which no longer names a paper ("" if none was lost)
    before: dict[str, Record] = field(default_factory=dict)  # both papers as stored before
    after: Record = field(default_factory=dict)  # the kept paper as the merge left it
    lists_before: dict[str, list[str]] = field(default_factory=dict)  # the lists the merge changed
    lists_after: dict[str, list[str]] = field(default_factory=dict)
    # the entries whose crossref/xdata named the lost key: their records before and after
    refs_before: dict[str, dict[str, str]] = field(default_factory=dict)
    refs_after: dict[str, dict[str, str]] = field(default_factory=dict)

    def summary(self) -> str:
        """In words: which paper went into which, and the key that no longer cites anything."""
        text = f"Merged {self.gone} into {self.kept}"
        if self.kept_key:
            text += f" (citation key {self.kept_key!r})"
        if self.lost_key:
            text += f"; the key {self.lost_key!r} is gone: cite it as {self.kept_key!r}"
        return text + "."


class Duplicates:
    """The library's possible duplicates (see `duplicates.possible_duplicates`)."""

    def __init__(self, lib: Library) -> None:
        self.lib = lib

    def pairs(self, papers: Iterable[Paper] | None = None) -> list[Pair]:
        """Pairs of papers that may be one paper, less those kept apart, oldest first. A
        caller off the thread that edits passes `papers`, a list it copied from `papers()`."""
        pool = list(self.lib.papers()) if papers is None else list(papers)
        return possible_duplicates(pool, [(p.id, other) for p in pool for other in p.distinct])

    def keep_apart(self, a: str, b: str) -> bool:
        """Remember that papers `a` and `b` are different (ids or prefixes); False if known."""
        a, b = self._two(a, b)
        other = {a: b, b: a}
        with self.lib._history.labelled("Keep 2 papers apart"):
            changed = self.lib._set_many(
                [a, b], lambda p: {"distinct": [*p.distinct, other[p.id]]} if other[p.id] not in p.distinct else {}
            )
        return changed > 0

    def forget_apart(self, a: str, b: str) -> bool:
        """Offer the pair again (the undo of `keep_apart`); False if it was not kept apart."""
        a, b = self._two(a, b)
        other = {a: b, b: a}
        changed = self.lib._set_many(
            [a, b],
            lambda p: {"distinct": [i for i in p.distinct if i != other[p.id]]} if other[p.id] in p.distinct else {},
        )
        return changed > 0

    def _two(self, a: str, b: str) -> tuple[str, str]:
        a, b = self.lib.resolve(a), self.lib.resolve(b)
        if a == b:
            raise InvalidValueError(f"{a} and {b} are the same paper; name two different papers")
        return a, b

    def merge(self, keep: str, other: str) -> Merged:
        """Merge paper `other` into `keep` (ids or prefixes) as one change: `keep` takes the
        combined fields (see `dedupe.combine`), `other` is removed, and on every reading list
        `keep` takes `other`'s place (once)."""
        lib = self.lib
        keep, other = self._two(keep, other)
        kept_paper, gone_paper = lib.get(keep), lib.get(other)
        before = lib.records([keep, other])
        changes = combine(kept_paper, gone_paper)
        lists_before: dict[str, list[str]] = {}
        lists_after: dict[str, list[str]] = {}
        for name, members in lib._store.lists.items():
            if other in members:
                lists_before[name] = list(members)
                replaced = [keep if pid == other else pid for pid in members]
                lists_after[name] = list(dict.fromkeys(replaced))
        kept_key = changes.get("citekey", kept_paper.citekey)
        lost = gone_paper.citekey if gone_paper.citekey and gone_paper.citekey != kept_key else ""
        # the children of the paper that goes name the one that stays (their crossref/xdata)
        others = (p for p in lib.papers() if p.id not in (keep, other))
        refs_after = references_renamed(others, lost, kept_key) if lost and kept_key else {}
        refs_before = {pid: lib.get(pid).bibfields for pid in refs_after}
        ops, events = _ops(lib, keep, other, {**changes, "updated": now_iso()}, lists_after, remove=True)
        _refs(ops, events, refs_after)
        with lib._history.labelled(f"Merge 2 papers into '{kept_paper.title[:40]}'"):
            lib._commit(ops, events)
        merged = Merged(keep, other, kept_key, lost, before, lib.records([keep])[keep], lists_before, lists_after)
        merged.refs_before, merged.refs_after = refs_before, refs_after
        return merged

    def undo(self, merged: Merged) -> None:
        """Put both papers and the reading lists back as they were before the merge (one change)."""
        lib = self.lib
        if merged.kept not in lib:
            return  # deleted since: nothing to take apart
        changes = _diff(lib, merged.kept, merged.before[merged.kept])
        ops, events = _ops(lib, merged.kept, merged.gone, changes, merged.lists_before, remove=False)
        if merged.gone not in lib:
            ops.insert(0, Op("add", merged.gone, Paper.from_dict(dict(merged.before[merged.gone]))))
            events.insert(0, Change("papers-added", ids=frozenset([merged.gone])))
        _refs(ops, events, {pid: raw for pid, raw in merged.refs_before.items() if pid in lib})
        lib._commit(ops, events)

    def redo(self, merged: Merged) -> None:
        """Make the merge again, as it was made (one change)."""
        lib = self.lib
        if merged.kept not in lib:
            return
        changes = _diff(lib, merged.kept, merged.after)
        ops, events = _ops(lib, merged.kept, merged.gone, changes, merged.lists_after, remove=merged.gone in lib)
        _refs(ops, events, {pid: raw for pid, raw in merged.refs_after.items() if pid in lib})
        lib._commit(ops, events)


def _refs(ops: list[Op], events: list[Change], records: dict[str, dict[str, str]]) -> None:
    """Add to a merge's change the records of the entries that cross-reference it."""
    if records:
        now = now_iso()
        ops += [Op("set", pid, {"bibfields": raw, "updated": now}) for pid, raw in records.items()]
        events.append(Change("papers-changed", ids=frozenset(records), fields=frozenset({"bibfields"})))


def _diff(lib: Library, pid: str, record: Record) -> dict[str, object]:
    """The fields that make paper `pid` the stored `record` again (and `updated` moves on)."""
    raw = lib.get(pid).raw()
    out = {
        k: record.get(k, FIELDS[k])
        for k in set(raw) | set(record)
        if k not in ("id", "updated") and raw.get(k, FIELDS[k]) != record.get(k, FIELDS[k])
    }
    out["updated"] = now_iso()
    return out


def _ops(
    lib: Library, kept: str, gone: str, changes: dict[str, object], lists: dict[str, list[str]], remove: bool
) -> tuple[list[Op], list[Change]]:
    """The store operations and events of a merge (`remove`: `gone` goes) or of its undo."""
    ops: list[Op] = [Op("del", gone)] if remove else []
    events = [Change("papers-removed", ids=frozenset([gone]))] if remove else []
    ops += [Op("list", name, ids) for name, ids in lists.items()]
    ops.append(Op("set", kept, {k: encode_field(k, v) for k, v in changes.items()}))
    if lists:
        events.append(Change("lists-changed", ids=frozenset([kept, gone]), lists=frozenset(lists)))
    events.append(Change("papers-changed", ids=frozenset([kept]), fields=frozenset(changes)))
    return ops, events
