"""Suggestions for a tag or a reading list, for the facade (`Library.suggest`).

The features of the whole library (core/discovery.py) are kept per library,
beside it rather than in it: a `FeatureCache` per open `Library`, rebuilt
only for the papers whose text changed when the library's generation moves
on. The first request on a large library pays for reading every paper's
text (a few seconds at 100,000 papers); the window asks from a worker
thread, so it waits there and nowhere else.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

from ..discovery_types import Suggestion
from ..errors import InvalidValueError
from ..paper import normalize_tag
from .checks import text_arg
from .lists import list_key
from .searching import Cancelled

if TYPE_CHECKING:  # core/discovery.py loads NumPy: imported when suggestions are first asked for
    from ..discovery import FeatureCache, Features
    from .facade import Library

__all__ = ["MIN_POSITIVES", "MODEL", "Suggestion", "features", "suggest"]

MIN_POSITIVES = 2
FEATURES_NAME = "features.npz"  # the term counts, in this machine's folder for the library
# Measured on the sample library (5 of its 15 diffusion-model papers tagged, the other 10
# held back, 40 random splits): precision@5 0.81 for logistic regression, 0.79 for the
# centroid difference (chance: 0.03). The logistic model's weights are fitted rather than
# averaged, and training and ranking stay inside the 2 s budget at 100,000 papers
# (0.4-0.8 s, tests/perf/bench_suggest.py; the centroid takes 0.07 s)
MODEL = "logistic"

_caches: weakref.WeakKeyDictionary[Library, FeatureCache] = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()


def _cache(lib: Library) -> FeatureCache:
    with _caches_lock:
        cache = _caches.get(lib)
        if cache is None:
            from ..discovery import FeatureCache
            from .local import index_folder

            cache = _caches[lib] = FeatureCache(index_folder(lib).parent / FEATURES_NAME)
        return cache


def features(lib: Library, cancelled: Cancelled | None = None) -> Features | None:
    """The library's TF-IDF features at its current generation (built or brought up
    to date on first use after a change); None if cancelled. Call it from a worker
    thread to have them ready before the first suggestion is asked for."""
    # the generation first, then a copy of the papers (the GUI thread may edit while a
    # worker reads): an edit in between leaves features newer than their key, never older
    generation = lib.generation
    return _cache(lib).features(generation, list(lib._papers.values()), cancelled)


def suggest(
    lib: Library,
    tag: str | None = None,
    list_name: str | None = None,
    limit: int = 20,
    cancelled: Cancelled | None = None,
) -> list[Suggestion]:
    """Papers to add to a tag (or a reading list), best first, each with the terms that
    weighed most in it; papers already carrying the tag (on the list) are not suggested.

    A linear model trained on the papers with the tag against the rest ranks the others
    by TF-IDF of title and abstract (core/discovery.py). Give exactly one of `tag` and
    `list_name`. InvalidValueError when fewer than 2 papers carry it, NotFoundError for an
    unknown list. When `cancelled()` turns true the work stops and the answer is [].
    """
    if (tag is None) == (list_name is None):
        raise InvalidValueError("Suggestions are for one tag or one reading list: give exactly one of them.")
    if type(limit) is not int or limit < 1:
        raise InvalidValueError(f"a limit is a number of papers, 1 or more, not {limit!r}")
    generation = lib.generation  # before the copy of the papers: see `features`
    papers = list(lib._papers.values())
    if tag is not None:
        wanted = normalize_tag(text_arg(tag, "a tag"))
        if not wanted:
            raise InvalidValueError("Suggestions for a tag need the tag's name.")
        positives = [p.id for p in papers if wanted in p.tags]
        what, where = f"Suggestions for {tag.strip()!r}", f"tagged {wanted!r}"
    else:
        assert list_name is not None
        name = list_key(lib, list_name)
        present = {p.id for p in papers}
        positives = [pid for pid in lib.list_ids(name) if pid in present]
        what, where = f"Suggestions for the list {name!r}", f"on the list {name!r}"
    if len(positives) < MIN_POSITIVES:
        raise InvalidValueError(
            f"{what} need at least {MIN_POSITIVES} papers {where}; "
            f"{len(positives)} {'is' if len(positives) == 1 else 'are'}."
        )
    cache = _cache(lib)
    x = cache.features(generation, papers, cancelled)
    if x is None:
        return []
    from ..discovery import rank

    found = rank(x, positives, limit=limit, model=MODEL, cancelled=cancelled)
    if found is None:
        return []
    by_id = lib._papers
    return [
        Suggestion(s.paper_id, round(s.score, 4), cache.shown_terms(by_id[s.paper_id], s.terms))
        if s.paper_id in by_id
        else s
        for s in found
    ]
