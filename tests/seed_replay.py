"""Serve the seed replay set (tests/fixtures/metadata/seeds/, see SOURCES.md there) on a replay
server, as the services would answer a look-up of the seed papers.

Each answer file answers one seed paper. A search is routed to the paper it is about the way
the service would find it: arXiv's `abs:"…" AND abs:"…"` query by its phrases (every phrase
in the paper's abstract), a text search (OpenAlex `search`, Crossref `query.bibliographic`,
Semantic Scholar `query`) by its words (the paper whose abstract holds the largest share of
them, at least 80%). Every other search gets the service's empty answer, and Crossref's
/works/{doi} the published versions' records by DOI.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from replay_server import RECORDED, ReplayServer

SEEDS = Path(__file__).resolve().parent / "fixtures" / "metadata" / "seeds"
INDEX: dict[str, dict[str, object]] = json.loads((SEEDS / "index.json").read_text(encoding="utf-8"))
EXPECTED: list[dict[str, object]] = json.loads((SEEDS / "expected.json").read_text(encoding="utf-8"))

_PHRASE_RE = re.compile(r'(?:abs|ti|all):"([^"]+)"|(?:abs|ti|all):([^\s"()]+)')
_WORD_RE = re.compile(r"[^\W_]+")


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text.casefold())


_ABSTRACT_WORDS = {key: " ".join(_words(str(entry["abstract"]))) for key, entry in INDEX.items()}
_WORD_SETS = {key: set(text.split()) for key, text in _ABSTRACT_WORDS.items()}


@lru_cache(maxsize=256)  # every route asks about the same query: decide once
def arxiv_key(search_query: str) -> str | None:
    """The seed paper an arXiv search_query finds: all its phrases are in the abstract."""
    phrases = [" ".join(_words(a or b)) for a, b in _PHRASE_RE.findall(search_query)]
    phrases = [p for p in phrases if p]
    if not phrases:
        return None
    for key, text in _ABSTRACT_WORDS.items():
        padded = f" {text} "
        if all(f" {p} " in padded for p in phrases):
            return key
    return None


@lru_cache(maxsize=256)
def text_key(query: str) -> str | None:
    """The seed paper a bibliographic text search is about (most of its words in the abstract)."""
    words = set(_words(query))
    if not words:
        return None
    best, best_share = None, 0.0
    for key, known in _WORD_SETS.items():
        share = len(words & known) / len(words)
        if share > best_share:
            best, best_share = key, share
    return best if best_share >= 0.8 else None


_QUERY_PARAM = {"arxiv": "search_query", "openalex": "search", "crossref": "query.bibliographic", "s2": "query"}
_PATHS = {
    "arxiv": "/arxiv/api/query",
    "openalex": "/openalex/works",
    "crossref": "/crossref/works",
    "s2": "/s2/graph/v1/paper/search",
}
_EMPTY = {
    "arxiv": RECORDED / "arxiv_query_empty_id_list_0000.0000.xml",
    "crossref": RECORDED / "crossref_works_query_title_nomatch_rows1.json",
    "s2": RECORDED / "s2_paper_search_empty.json",
    "openalex": SEEDS / "openalex" / "empty.json",
}


def _keyed(service: str, key: str):  # type: ignore[no-untyped-def]
    param = _QUERY_PARAM[service]
    finder = arxiv_key if service == "arxiv" else text_key

    def matches(query: dict[str, str]) -> bool:
        text = query.get(param) or query.get("query", "")
        return finder(text) == key

    return matches


def serve_seeds(replay: ReplayServer, services: tuple[str, ...] = ("arxiv", "openalex", "crossref", "s2")) -> None:
    """Route the seed replay set on `replay`: each paper's answers, then every other search's
    empty answer, and the published versions' Crossref records by DOI."""
    for key, entry in INDEX.items():
        files = entry["files"]
        assert isinstance(files, dict)
        for service, name in files.items():
            if service in services:
                replay.route(_PATHS[service], SEEDS / name, query=_keyed(service, key))
        dois = entry["dois"]
        assert isinstance(dois, dict)
        for doi, name in dois.items():
            replay.route(f"/crossref/works/{doi}", SEEDS / name)
    for service in services:
        replay.route(_PATHS[service], _EMPTY[service])


def expected_by_abstract() -> dict[str, dict[str, object]]:
    """expected.json keyed by the start of the paper's abstract (as in plan.py)."""
    return {str(e["abstract_start"]): e for e in EXPECTED}
