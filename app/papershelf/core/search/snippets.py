"""Highlighted fragments of an abstract around the words a query matched, and of a PDF's
text with the page they are on ("p. 7: …")."""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable, Sequence

from ..pdf.fulltext import PdfText
from .pdftext import MAX_FULLTEXT_CHARS
from .schema import WORD_RE

SNIPPET_CHARS = 160  # one fragment at most
SNIPPET_SURROUND = 40  # context before the first match of a fragment
_TERM_CLASS_RE = re.compile(r'class="match term(\d+)"')


@functools.lru_cache(maxsize=64)
def _term_finder(terms: tuple[str, ...]) -> re.Pattern[str]:
    heads = sorted({t[: max(3, len(t) - 2)] for t in terms}, key=len, reverse=True)
    alternatives = "|".join(map(re.escape, heads))
    return re.compile(r"(?<![\w.'’])(?:" + alternatives + r")\w*(?:[.'’]\w+)*", re.IGNORECASE)


def make_snippet(text: str, terms: dict[str, int], normal: Callable[[str], str], top: int = 2) -> str:
    """The `top` best fragments of `text` around words whose indexed form is in
    `terms` (term → its number, for the CSS class), in text order, joined by
    " … "; HTML-escaped, matches in <b class="match termN">. One regular
    expression pass and a cached stemmer: Whoosh's highlighter costs ~1 ms per
    abstract, this ~0.1 ms.
    """
    matches = []  # (start, end, term number)
    # Stems are (nearly) prefixes of the words they come from: in plain ASCII
    # text only words starting like a term are run through the stemmer.
    finder = _term_finder(tuple(terms)) if text.isascii() else WORD_RE
    for m in finder.finditer(text):
        n = terms.get(normal(m.group()))
        if n is not None:
            matches.append((m.start(), m.end(), n))
    if not matches:
        return ""
    fragments = []  # (score, start, end, matches)
    i = 0
    while i < len(matches):
        start = max(0, matches[i][0] - SNIPPET_SURROUND)
        limit = start + SNIPPET_CHARS
        j = i
        while j + 1 < len(matches) and matches[j + 1][1] <= limit:
            j += 1
        inside = matches[i : j + 1]
        score = (len({n for _, _, n in inside}), len(inside))
        fragments.append((score, start, limit, inside))
        i = j + 1
    best = sorted(fragments, key=lambda f: (-f[0][0], -f[0][1], f[1]))[:top]
    parts = []
    for _, start, limit, inside in sorted(best, key=lambda f: f[1]):
        if start > 0:  # begin and end on word boundaries
            space = text.find(" ", start, inside[0][0])
            start = space + 1 if space >= 0 else inside[0][0]
        end = min(len(text), limit)
        if end < len(text):
            space = text.rfind(" ", inside[-1][1], end)
            end = space if space >= 0 else inside[-1][1]
        pos, html_parts = start, []
        for a, b, n in inside:
            html_parts.append(html.escape(text[pos:a], quote=False))
            html_parts.append(f'<b class="match term{n}">{html.escape(text[a:b], quote=False)}</b>')
            pos = b
        html_parts.append(html.escape(text[pos:end], quote=False))
        parts.append("".join(html_parts).strip())
    return " … ".join(parts)


def make_page_snippet(
    texts: Sequence[PdfText], terms: dict[str, int], normal: Callable[[str], str], names: Sequence[str] = ()
) -> str:
    """The best fragment of these PDFs' texts (the first page holding the most of `terms`),
    with its page: "p. 7: …the <b class="match term0">diffusion</b> prior…" (HTML); with
    several PDFs, the file's name too ("slides.pdf, p. 7: …": a page number alone would not say
    which). Only the text the index holds is read (MAX_FULLTEXT_CHARS of the PDFs); "" when no
    page holds a term. `names`: the files' names, in the order of `texts`."""
    best, best_count = "", 0
    left = MAX_FULLTEXT_CHARS
    for k, text in enumerate(texts):
        where = f"{html.escape(names[k], quote=False)}, " if len(texts) > 1 and k < len(names) else ""
        for number, page in enumerate(text.pages, 1):
            if left <= 0:
                break
            page = page[:left]
            left -= len(page) + 1
            found = make_snippet(" ".join(page.split()), terms, normal, top=1)
            if not found:
                continue
            count = len(set(_TERM_CLASS_RE.findall(found)))
            if count > best_count:
                best, best_count = f"{where}p. {number}: …{found}…", count
                if count == len(terms):
                    return best
    return best
