"""Tags as a whole, for the facade: rename or merge, delete, the saved searches a tag is in,
a record's keywords made tags on request, and the tags the user chose (the number keys').

A record's keywords are the record's (`citation.record_keywords`); tags are the user's.
Which tags the user applied by hand is kept in `devices/<device>/hand-tags.json` in the
library folder, one file per device merged on reading (as the saved searches are, and for
the same reasons: see saved.py and synced.py), so that the number keys 1-9 go to tags the
user chose, never to keywords an import or a "Make Keywords Tags" brought.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..citation import record_keywords
from ..errors import ExportError, InvalidValueError
from ..limits import MAX_LABEL_CHARS
from ..overview import TOP_TAGS
from ..paper import normalize_tag
from . import saved as saving
from . import synced
from .checks import id_list, new_tags, new_text, text_arg

if TYPE_CHECKING:
    from .facade import Library

HAND_TAGS_FILE = "hand-tags.json"
_FORMAT = "papershelf-hand-tags"


# ---- saved searches that use a tag -------------------------------------------------


def _tag_terms(text: str, tag: str) -> list[re.Match[str]]:
    """Where the search words name `tag` (`tag:x`, `tags:x`, `tag:"x y"`), compared as tags are."""
    out = []
    for m in re.finditer(r'(?<![\w:])(tags?):(?:"([^"]*)"|([^\s()"]+))', text, re.IGNORECASE):
        if normalize_tag(m.group(2) if m.group(2) is not None else m.group(3)) == tag:
            out.append(m)
    return out


def _uses(search: saving.SavedSearch, tag: str) -> bool:
    return normalize_tag(search.filters.get("tag", "")) == tag or bool(_tag_terms(search.text, tag))


def saved_searches_using(lib: Library, tag: str) -> list[str]:
    """The names of the saved searches that use `tag` (as a filter or as `tag:` in their words)."""
    wanted = normalize_tag(text_arg(tag, "a tag"))
    return [s.name for s in saving.load(lib) if wanted and _uses(s, wanted)]


def _term(new: str) -> str:
    return "tag:" + (new if re.fullmatch(r'[^\s()":]+', new) else '"' + new.replace('"', "") + '"')


def _retag_saved(lib: Library, old: str, new: str) -> list[str]:
    """Saved searches that used tag `old` use `new` instead; their names."""
    searches = saving.load(lib)
    changed: list[str] = []
    for i, s in enumerate(searches):
        if not _uses(s, old):
            continue
        text = s.text
        for m in reversed(_tag_terms(text, old)):
            text = text[: m.start()] + _term(new) + text[m.end() :]
        filters = dict(s.filters)
        if normalize_tag(filters.get("tag", "")) == old:
            filters["tag"] = new
        searches[i] = saving.SavedSearch(s.name, text, filters)
        changed.append(s.name)
    if changed:
        saving._write(lib, searches)
    return changed


def restore_saved_searches(
    lib: Library, back: Iterable[saving.SavedSearch], only_if: Iterable[saving.SavedSearch]
) -> None:
    """Put back each search of `back` (by name) that is still what an edit left (its search of
    `only_if`): what undoing, or redoing, a tag rename does. Every other saved search, one
    saved, changed or deleted since, is left as it is."""
    wanted, left = {s.name: s for s in back}, {s.name: s for s in only_if}
    searches = saving.load(lib)
    changed = False
    for i, s in enumerate(searches):
        if s.name in wanted and left.get(s.name) == s and wanted[s.name] != s:
            searches[i] = wanted[s.name]
            changed = True
    if changed:
        saving._write(lib, searches)


def hand_tags(lib: Library) -> list[str]:
    """The tags the user applied by hand (what the number keys choose from)."""
    return _hand_tags(lib)


def restore_hand_tags(lib: Library, back: Iterable[str], only_if: Iterable[str]) -> None:
    """Undo (or redo) what an edit did to the hand-applied tags: the tags it added (in
    `only_if`, not in `back`) are taken out, the ones it took out put back; others stay."""
    back, left = list(back), list(only_if)
    added, removed = set(left) - set(back), set(back) - set(left)
    if not added and not removed:
        return
    now = _hand_tags(lib)
    _write_hand_tags(lib, [t for t in now if t not in added] + [t for t in back if t in removed and t not in now])


# ---- rename, merge, delete ---------------------------------------------------------


def rename_tag(lib: Library, old: str, new: str) -> int:
    """Rename a tag on every paper that has it; renaming onto an existing tag merges the
    two. The saved searches that used it use the new name. Returns how many papers changed."""
    old = normalize_tag(text_arg(old, "a tag"))
    new = normalize_tag(new_text(text_arg(new, "a tag"), "the new tag", MAX_LABEL_CHARS))
    if not new:
        raise InvalidValueError("a tag needs a name")
    having = [p.id for p in lib.papers() if old in p.tags]
    n = lib._set_many(having, lambda p: {"tags": sorted((set(p.tags) - {old}) | {new})})
    if old != new:
        _retag_saved(lib, old, new)
        hand = _hand_tags(lib)
        if old in hand:
            _write_hand_tags(lib, [new if t == old else t for t in hand], {new: old})
    return n


def delete_tag(lib: Library, tag: str) -> int:
    """Take a tag off every paper that has it (NotFoundError naming the closest tag for one
    no paper has); returns how many papers changed. The saved searches that use it are left
    as they are (`saved_searches_using` names them, for the person to decide)."""
    name = lib.tag_named(tag)
    having = [p.id for p in lib.papers() if name in p.tags]
    return lib._set_many(having, lambda p: {"tags": [t for t in p.tags if t != name]})


def make_keywords_tags(lib: Library, ids: Iterable[str]) -> int:
    """Tag these papers with their records' keywords (as tags: normalised); returns how many
    changed. Not a hand-applied tag: the number keys stay with the user's own."""
    ids = id_list(ids)
    return lib._set_many(
        ids,
        lambda p: {"tags": sorted(set(p.tags) | {normalize_tag(k) for k in record_keywords(p.bibfields)} - {""})},
    )


def drop_keyword_tags(lib: Library) -> int:
    """Take off each paper the tags that are only its record's keywords (what imports made of
    them before keywords stayed keywords), but never a tag the user applied by hand; returns
    how many papers changed. The keywords stay the record's."""
    hand = set(_hand_tags(lib))

    def kept(tags: list[str], bibfields: dict[str, str]) -> list[str]:
        keywords = {normalize_tag(k) for k in record_keywords(bibfields)}
        return [t for t in tags if t in hand or t not in keywords]

    having = [p.id for p in lib.papers() if p.tags and len(kept(p.tags, p.bibfields)) != len(p.tags)]
    return lib._set_many(having, lambda p: {"tags": kept(p.tags, p.bibfields)})


# ---- the tags the user chose (the number keys') ------------------------------------


def _read_tag(raw: object, deleted: bool) -> tuple[str, dict[str, Any]]:
    """One entry of a hand-tags file (a tag, or {"tag": …} since devices); ValueError."""
    tag = raw.get("tag") if isinstance(raw, dict) else raw
    if not isinstance(tag, str) or not tag:
        raise ValueError("not a tag")
    return tag, {"tag": tag}


_HAND = synced.Kind(HAND_TAGS_FILE, _FORMAT, "tags", "tag", "hand-tags", _read_tag)


def _hand_tags(lib: Library) -> list[str]:
    """The tags the user applied by hand, in the order first applied, every device's; none
    for an unreadable file (it is only a preference: the keys then start again from the next tag)."""
    return [e.key for e in synced.read(lib, _HAND).live()]


def _write_hand_tags(lib: Library, tags: list[str], places: dict[str, str] | None = None) -> None:
    """Make the hand-applied tags `tags`, in this device's file (a tag of `places` takes the
    place of the tag it names: a rename)."""
    if lib.readonly:
        return
    merged = synced.read(lib, _HAND)
    try:
        synced.write(lib, _HAND, merged, synced.diff(merged, ((t, {"tag": t}) for t in tags)), places or {})
    except ExportError:
        pass  # a preference: the tags themselves are saved; the keys follow the next time


def add_tags(lib: Library, ids: Iterable[str], tags: Iterable[str]) -> int:
    """Add tags to these papers, by the user's hand (they become the number keys'); returns
    how many changed."""
    new = {normalize_tag(t) for t in new_tags(tags)} - {""}
    n = lib._set_many(ids, lambda p: {"tags": sorted(set(p.tags) | new)})
    hand = _hand_tags(lib)
    if new - set(hand):
        _write_hand_tags(lib, hand + sorted(new - set(hand)))
    return n


def key_tags(lib: Library, n: int = TOP_TAGS) -> list[str]:
    """The tags the number keys 1-9 reach: the tags the user applied by hand (the window, the
    paper menu, `papershelf tag --add`; never an import's keywords) that papers still have,
    most used first, ties in alphabetical order."""
    counts = lib.tag_counts()
    chosen = [t for t in _hand_tags(lib) if counts.get(t)]
    return sorted(chosen, key=lambda t: (-counts[t], t))[:n]
