"""What people type, as a Whoosh query tree.

Whoosh's MultifieldParser over titles, authors, abstracts, notes and areas,
AND between words; `author:`/`by:`, `tag:`, `keyword:`, `list:`, `note:` as aliases;
fuzzy words compared as stems. Lone operators or wildcards mean
"everything"; whatever the parser rejects is searched as plain words;
control characters are dropped and the length is capped.
"""

from __future__ import annotations

import re
from typing import Any

from whoosh import qparser
from whoosh import query as wquery

from .schema import SEARCH_FIELDS, PaperAnalyzer

MAX_QUERY_CHARS = 1000
MAX_QUERY_TERMS = 48

_NOTHING_TO_SEARCH_RE = re.compile(r"(?:[\s*?()\"'~^+\-]|\bAND\b|\bOR\b|\bNOT\b)*")


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
            return q.accept(self._tune_fuzzy), False
        except Exception:
            return self.plain_words(text), True

    def _tune_fuzzy(self, q: Any) -> Any:
        """`diffuson~` is typed unstemmed against stemmed terms ("diffus"):
        compare stems, and allow two edits for words long enough to bear them."""
        if isinstance(q, wquery.FuzzyTerm) and q.fieldname in ("title", "abstract", "notes"):
            text = self.analyzer._normal(q.text)
            return wquery.FuzzyTerm(
                q.fieldname,
                text,
                boost=q.boost,
                maxdist=max(q.maxdist, 2 if len(text) >= 5 else 1),
                prefixlength=max(q.prefixlength, 1),
            )
        return q

    def plain_words(self, text: str) -> Any:
        """Every word of `text` (analysed) in any searched field, all of them required."""
        words = [t.text for t in self.analyzer(text)][:MAX_QUERY_TERMS]
        if not words:
            return wquery.NullQuery
        return wquery.And([wquery.Or([wquery.Term(f, w) for f in SEARCH_FIELDS]) for w in words])
