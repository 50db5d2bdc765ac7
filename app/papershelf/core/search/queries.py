"""What people type, as a Whoosh query tree.

Whoosh's MultifieldParser over titles, authors, abstracts, notes and areas,
AND between words; `author:`/`by:`, `tag:`, `keyword:`, `list:`, `note:` as aliases;
fuzzy words (`word~`) as `TypoTerm`s; `fulltext:` (or `pdf:`) only the attached PDFs' text.
`without_field`: the query as if a field were not there (the metadata-only query that tells
a PDF-only hit from the rest). Lone operators or wildcards mean
"everything"; whatever the parser rejects is searched as plain words;
control characters are dropped and the length is capped. `like_query`: a
paper without an abstract as the query for papers like it.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Callable, Iterator
from typing import Any

from whoosh import qparser
from whoosh import query as wquery

from ..biblio.names import key_word
from ..citation import record_keywords
from ..paper import Paper
from ..render import plain_text
from .schema import FULLTEXT, SEARCH_FIELDS, PaperAnalyzer

MAX_QUERY_CHARS = 1000
MAX_QUERY_TERMS = 48

_NOTHING_TO_SEARCH_RE = re.compile(r"(?:[\s*?()\"'~^+\-]|\bAND\b|\bOR\b|\bNOT\b)*")


MAX_TYPO_WORD = 32  # letters of a fuzzy word whose one-edit variants are looked up, at most
_FOLD = PaperAnalyzer(stem=False, stops=False)  # lower-case, accents folded
_LETTERS = string.ascii_lowercase
_DIGITS = string.digits


def one_edit_variants(word: str) -> set[str]:
    """Every string one edit from `word`: a letter deleted, inserted, replaced, or two
    neighbours swapped (inserted and replacing letters: a-z, the word's own, digits if
    it has any). About 700 for a 13-letter word."""
    alphabet = set(_LETTERS) | set(word)
    if any(ch.isdigit() for ch in word):
        alphabet |= set(_DIGITS)
    out = set()
    for i in range(len(word) + 1):
        head, tail = word[:i], word[i:]
        for ch in alphabet:
            out.add(head + ch + tail)
        if tail:
            out.add(head + tail[1:])
            for ch in alphabet:
                out.add(head + ch + tail[1:])
            if len(tail) > 1:
                out.add(head + tail[1] + tail[0] + tail[2:])
    out.discard("")
    return out


class TypoTerm(wquery.FuzzyTerm):  # type: ignore[misc]   # Whoosh has no type information
    """A fuzzy word (`word~`): the indexed terms near what was typed.

    Terms are stems, and a typo can stem differently from the word it spoils
    ("optimization" → "optim", but "optimizaton" stays as it is, 6 edits away),
    so comparing the typed word's stem with the indexed stems misses long words.
    First the exact ones: the stems of every string one edit from the word as
    typed (deletion, insertion, substitution, transposition) that the index
    holds; so a one-letter typo finds at least what the word finds, at any
    length. Then, as before, the stems within `maxdist` edits of its stem.
    """

    def __init__(
        self,
        fieldname: str,
        text: str,
        typed: str,
        normal: Callable[[str], str],
        boost: float = 1.0,
        maxdist: int = 1,
        prefixlength: int = 1,
    ) -> None:
        super().__init__(fieldname, text, boost=boost, maxdist=maxdist, prefixlength=prefixlength)
        self.typed = typed  # the word as typed, folded (not stemmed)
        self.normal = normal  # the field's analysis of one word
        self._variants: list[str] | None = None

    def __eq__(self, other: object) -> bool:
        return bool(super().__eq__(other)) and self.typed == getattr(other, "typed", None)

    def __hash__(self) -> int:
        return int(super().__hash__()) ^ hash(self.typed)

    def variants(self) -> list[str]:
        """The field's terms for every string one edit from the word as typed, and its
        own stem (whether the index holds them or not), sorted."""
        if self._variants is None:
            normal = self.normal
            # a longer "word" is no word (and its variants would take seconds to stem)
            near = one_edit_variants(self.typed) if len(self.typed) <= MAX_TYPO_WORD else set()
            self._variants = sorted({normal(v) for v in near} | {self.text})
        return self._variants

    def near(self, ixreader: Any) -> Iterator[str]:
        """The indexed terms within `maxdist` edits of the typed word's stem."""
        return ixreader.terms_within(self.fieldname, self.text, self.maxdist, prefix=self.prefixlength)  # type: ignore[no-any-return]

    def _btexts(self, ixreader: Any) -> Iterator[str]:
        """Whoosh's road (the evaluator asks its own vocabularies, faster): the
        variants the index holds, then the near terms."""
        field = self.fieldname
        seen = {v for v in self.variants() if (field, v) in ixreader}
        yield from sorted(seen)
        for term in self.near(ixreader):
            if term not in seen:
                seen.add(term)
                yield term


def clean_query(text: str) -> str:
    """The query with control characters as spaces, whitespace collapsed, length capped."""
    text = "".join(ch if ch.isprintable() else " " for ch in text[:MAX_QUERY_CHARS])
    return " ".join(text.split())


class QueryParser:
    """Parses query text against the index's schema (the parser is built on first use)."""

    def __init__(self, schema: Any, analyzer: PaperAnalyzer) -> None:
        self.schema = schema
        self.analyzer = analyzer
        self._parser: Any = None

    def _whoosh_parser(self) -> Any:
        if self._parser is None:
            parser = qparser.MultifieldParser(list(SEARCH_FIELDS), self.schema, group=qparser.AndGroup)
            parser.add_plugin(qparser.FuzzyTermPlugin())
            parser.add_plugin(qparser.GtLtPlugin())
            parser.add_plugin(
                qparser.FieldAliasPlugin(
                    {
                        "authors": ["author", "by"],
                        "tags": ["tag"],
                        "keywords": ["keyword"],
                        "lists": ["list"],
                        "notes": ["note"],
                        "fulltext": ["pdf"],
                    }
                )
            )
            self._parser = parser
        return self._parser

    def parse(self, text: str) -> tuple[Any, bool]:
        """(query, fell_back): the parsed query, or plain words if the parser chokes."""
        text = clean_query(text)
        if not text or _NOTHING_TO_SEARCH_RE.fullmatch(text):
            return wquery.Every(), False  # "", "*", a lone operator: everything, at no cost
        try:
            q = self._whoosh_parser().parse(text)
            if q is wquery.NullQuery:
                raise ValueError("nothing left of the query")
            return q.accept(self._tune_fuzzy).accept(_phrase_as_words), False
        except Exception:
            return self.plain_words(text), True

    def _tune_fuzzy(self, q: Any) -> Any:
        """A fuzzy word as a `TypoTerm` (its words one edit away, then stems near its
        stem); two edits allowed for stems long enough to bear them."""
        if isinstance(q, wquery.FuzzyTerm) and q.fieldname in self.schema:
            analyzer = getattr(self.schema[q.fieldname], "analyzer", None)
            if not isinstance(analyzer, PaperAnalyzer):
                return q
            typed = _FOLD._normal(q.text)
            text = analyzer._normal(q.text)
            return TypoTerm(
                q.fieldname,
                text,
                typed,
                analyzer._normal,
                boost=q.boost,
                maxdist=max(q.maxdist, 2 if len(text) >= 5 and analyzer.stem else 1),
                prefixlength=max(q.prefixlength, 1),
            )
        return q

    def plain_words(self, text: str) -> Any:
        """Every word of `text` (analysed) in any searched field, all of them required."""
        words = [t.text for t in self.analyzer(text)][:MAX_QUERY_TERMS]
        if not words:
            return wquery.NullQuery
        return wquery.And([wquery.Or([wquery.Term(f, w) for f in SEARCH_FIELDS]) for w in words])


LIKE_TERMS = 40  # words of a paper's title and keywords that a `like_query` asks for, at most


def like_query(paper: Paper, analyzer: PaperAnalyzer, frequency: Callable[[str, str], int], papers: int) -> Any:
    """Papers like one without an abstract (a .bib entry, a DOI), as a query (None: nothing
    to go by): the words of its title and keywords in others' titles, abstracts and
    keywords, its venue's words in their venues, its authors' surnames among theirs.
    Whoosh's more-like-this reads the abstract field only, where such a paper and the
    papers like it have nothing.

    Each word is boosted by its rarity (`frequency(field, word)`: in how many of the
    `papers` it is), on top of BM25's own: as in a TF-IDF cosine, a rare word two
    papers share ("cocoa") says more than several common ones ("function", "review")."""

    def rare(fields: tuple[str, ...], word: str) -> float:
        seen = max(frequency(f, word) for f in fields)
        return max(math.log((1 + papers) / (1 + seen)), 0.01)

    title = "" if paper.title_derived else plain_text(paper.title)
    keywords = " ; ".join(record_keywords(paper.raw().get("bibfields", {})))
    words = list(dict.fromkeys(t.text for t in analyzer(f"{title} \n {keywords}")))[:LIKE_TERMS]
    texts = ("title", "abstract", "keywords")
    # each word counts once, where it weighs most: a title made from the abstract holds
    # the abstract's words twice, and a common word many times in a long abstract
    # would otherwise outweigh the rare words the papers share
    parts = [wquery.DisjunctionMax([wquery.Term(f, w, boost=rare(texts, w)) for f in texts]) for w in words]
    venue = dict.fromkeys(t.text for t in analyzer(plain_text(paper.venue)))
    parts += [wquery.Term("venue", w, boost=rare(("venue",), w)) for w in venue]
    surnames = sorted({_surname(name) for name in paper.authors} - {""})
    parts += [wquery.Term("authors", w, boost=rare(("authors",), w)) for w in surnames]
    return wquery.Or(parts) if parts else None


def _surname(name: str) -> str:
    """An author's family name as the index holds it ("Smith, J." and "J. Smith": "smith"; the
    last word of a family name of several, "Fletcher" of "Harry Fletcher III")."""
    return _FOLD._normal(key_word(plain_text(name)))


def _phrase_as_words(q: Any) -> Any:
    """A phrase in the PDFs' text as its words anywhere in them (the field keeps no positions)."""
    if type(q) is wquery.Phrase and q.fieldname == FULLTEXT:
        return wquery.And([wquery.Term(FULLTEXT, w, boost=q.boost) for w in q.words])
    return q


def uses_field(q: Any, field: str) -> bool:
    """Whether any word of the query tree is looked for in `field`."""
    if q.is_leaf():
        return getattr(q, "fieldname", None) == field
    return any(uses_field(sub, field) for sub in q.children())


def without_field(q: Any, field: str) -> Any:
    """The query with every leaf on `field` matching nothing (a field-less leaf kept)."""

    def drop(node: Any) -> Any:
        if node.is_leaf() and getattr(node, "fieldname", None) == field:
            return wquery.NullQuery
        return node

    return q.accept(drop)
