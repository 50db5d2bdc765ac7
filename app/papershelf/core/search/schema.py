"""What the index holds of a paper, and how text becomes terms.

One analyzer for titles, abstracts and notes (tokenise, lower-case, fold
accents, drop stop words, stem), the same minus stemming and stop words for
names; the Whoosh schema; and `paper_document`, a paper as the index sees it.
Changing any of these changes the index's contents: bump INDEX_VERSION.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from whoosh.analysis import STOP_WORDS, Token, Tokenizer
from whoosh.fields import ID, KEYWORD, NUMERIC, TEXT, Schema
from whoosh.lang.porter import stem as porter_stem

from ..biblio.sorting import TITLE_SORT_CHARS, title_key
from ..citation import record_keywords
from ..paper import Paper, tag_keyword
from ..render import plain_text

INDEX_VERSION = 7  # bump when the schema or the analysis changes: forces a rebuild
# 6: plain_text reads \r \d \k \b as accents (one accent table, issue 23)
# 7: `fulltext`, the text of a paper's attached PDFs (issue 24); the digest counts their text
METADATA_FIELDS = ("title", "authors", "abstract", "notes", "area")  # a hit here ranks above a PDF-only hit
FULLTEXT = "fulltext"  # the text of the paper's PDFs (`fulltext:word` searches only it)
SEARCH_FIELDS = (*METADATA_FIELDS, FULLTEXT)
FIELD_BOOSTS = {"title": 3.0, "authors": 2.0, FULLTEXT: 0.5}

WORD_RE = re.compile(r"\w+(?:[.'’]\w+)*", re.UNICODE)
_COMBINING_RE = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
_STOPS = frozenset(STOP_WORDS)


class PaperAnalyzer(Tokenizer):  # type: ignore[misc]   # Whoosh has no type information
    """Tokenise, lower-case, fold accents, drop stop words and stem, in one pass.

    Whoosh's chain of generator filters does the same at a fraction of the
    speed; indexing time is dominated by analysis. Accents are folded before
    stemming ("Schrödinger" → "schrodinger" → "schroding"), which
    StemmingAnalyzer + CharsetFilter gets the wrong way round.
    """

    def __init__(self, stem: bool = True, stops: bool = True) -> None:
        self.stem = stem
        self.stops = _STOPS if stops else frozenset()
        self._cache: dict[str, str] = {}

    def __getstate__(self) -> dict[str, Any]:
        # Whoosh pickles the schema, analyzer included, into the index's table of contents at
        # every commit and reads it back for every searcher: the word cache (up to 500,000
        # words, a PDF's vocabulary) is no part of it (it made the file 14 MB, each search 1.8 s)
        return {"stem": self.stem, "stops": self.stops}

    def __setstate__(self, state: dict[str, Any]) -> None:
        # an index written before this kept the whole __dict__ (its cache too): read the same
        self.stem = bool(state.get("stem", True))
        self.stops = frozenset(state.get("stops") or ())
        self._cache = {}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PaperAnalyzer) and other.stem == self.stem and other.stops == self.stops

    def __hash__(self) -> int:
        return hash((self.stem, len(self.stops)))

    def _normal(self, word: str) -> str:
        cached = self._cache.get(word)
        if cached is None:
            folded = word.lower()
            if not folded.isascii():
                folded = _COMBINING_RE.sub("", unicodedata.normalize("NFKD", folded))
            cached = porter_stem(folded) if self.stem and folded.isalpha() else folded
            if len(self._cache) > 500_000:
                self._cache.clear()
            self._cache[word] = cached
        return cached

    def __call__(
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Iterator[Any]:
        """Whoosh's tokenizer interface: one reused Token per word of `value`."""
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        if not tokenize:
            t.original = t.text = value
            t.boost = 1.0
            if positions:
                t.pos = start_pos
            if chars:
                t.startchar, t.endchar = start_char, start_char + len(value)
            yield t
            return
        stops = self.stops
        normal = self._normal
        for pos, m in enumerate(WORD_RE.finditer(value), start_pos):
            word = m.group()
            lowered = word.lower()
            t.stopped = lowered in stops
            if t.stopped and removestops:
                continue
            t.text = normal(word)
            t.boost = 1.0
            if keeporiginal:
                t.original = word
            if positions:
                t.pos = pos
            if chars:
                t.startchar = start_char + m.start()
                t.endchar = start_char + m.end()
            yield t


def make_schema() -> Any:
    """The index's Whoosh schema (a `whoosh.fields.Schema`)."""
    text = PaperAnalyzer()
    names = PaperAnalyzer(stem=False, stops=False)
    return Schema(
        id=ID(stored=True, unique=True, sortable=True),
        title=TEXT(analyzer=text, field_boost=FIELD_BOOSTS["title"]),
        authors=TEXT(analyzer=names, field_boost=FIELD_BOOSTS["authors"]),
        abstract=TEXT(analyzer=text),  # not stored: the store has it
        notes=TEXT(analyzer=text),
        # the joined text of the paper's PDFs (from the text cache, capped at MAX_FULLTEXT_CHARS),
        # not stored: snippets read the cache, which keeps the pages apart. No positions: a
        # phrase asks for its words anywhere in the PDFs (queries.py), as checking positions in
        # 2,000 PDFs' texts cost ~200 ms a query (tests/perf/bench_fulltext.py)
        fulltext=TEXT(analyzer=text, phrase=False),
        area=TEXT(analyzer=names),  # area and subarea words
        # not searched by default (`venue:`, `keywords:` ask for them): what related papers
        # are found by when a paper has no abstract (index.py's `more_like`)
        venue=TEXT(analyzer=text),
        keywords=TEXT(analyzer=text),  # the record's `keywords` field (a .bib's), not its tags
        area_exact=ID(),  # the top area, for filters and facets
        tags=KEYWORD(commas=True, lowercase=True),
        status=ID(),
        lists=KEYWORD(commas=True, lowercase=True),
        year=NUMERIC(int, bits=32, signed=False),
        source=KEYWORD(lowercase=True),
        added=ID(sortable=True),
        title_sort=ID(sortable=True),
        # what the document was made from (`paper_digest`): the catch-up at open
        # compares it with the store's papers instead of trusting any clock
        digest=ID(sortable=True),
    )


def paper_digest(paper: Paper, lists: list[str], texts: str = "") -> str:
    """A checksum of everything a paper's document is made from: its stored
    record, the names of the lists that hold it and `texts`, which of its PDFs'
    texts were extracted (`pdftext.PaperTexts.state`: extracting one changes the
    digest, so the catch-up indexes it). Two papers with the same digest index
    the same; the time stamps in it are data, never an order."""
    h = hashlib.blake2b(orjson.dumps(paper.raw(), option=orjson.OPT_SORT_KEYS), digest_size=8)
    for name in sorted(lists):
        h.update(b"\0" + name.encode("utf-8", "surrogatepass"))
    if texts:
        h.update(b"\1" + texts.encode("ascii"))
    return h.hexdigest()


def paper_document(paper: Paper, lists: list[str], texts: str = "", fulltext: str = "") -> dict[str, Any]:
    """What the index holds of one paper (all text as the reader sees it); `texts` and
    `fulltext`: the state and the joined text of its PDFs (`pdftext.PaperTexts`)."""
    doc: dict[str, Any] = {
        "id": paper.id,
        "title": plain_text(paper.title),
        "authors": " ; ".join(paper.authors),
        "abstract": plain_text(paper.abstract),
        "area": f"{paper.area} {paper.subarea}".strip(),
        "venue": plain_text(paper.venue),
        # the record's own keywords as words (`keyword:` asks for them), not the user's tags
        "keywords": " ; ".join(record_keywords(paper.raw().get("bibfields", {}))),
        "area_exact": paper.area.casefold(),
        "tags": ",".join(tag_keyword(t) for t in paper.tags),
        "status": paper.status.value,
        "lists": ",".join(tag_keyword(name) for name in lists),
        "source": " ".join(
            sorted({Path(s.file).name.casefold() for s in paper.sources} | {s.format for s in paper.sources})
        ),
        "added": paper.added,
        "title_sort": title_key(paper.title)[:TITLE_SORT_CHARS],
        "digest": paper_digest(paper, lists, texts),
        "fulltext": fulltext,
    }
    if paper.notes:
        doc["notes"] = paper.notes
    if paper.year:
        doc["year"] = int(paper.year)
    return {k: v for k, v in doc.items() if v != ""}
