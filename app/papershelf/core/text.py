"""Abstract clean-up: LaTeX text macros, math, Markdown and links to plain text.

Abstracts arrive as pasted from web pages: a mix of LaTeX (`\\textsc{X}`,
`$\\Delta$`), Markdown (`**bold**`, `[text](url)`) and bare specials (`%`,
`&`, `_`). `plain_text` gives what a reader should see, for titles, search
and fingerprints; the raw abstract is always kept as imported.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from .biblio.latex import blackboard, latex_to_text

_MATH_RE = re.compile(r"(?<!\\)\$\$?(.+?)(?<!\\)\$\$?", re.S)
# No "[" in a link's text or URL: each attempt then stops at the next "[", so
# "[[[…](](](" costs linear time instead of one scan to the end per bracket.
# A URL may hold balanced [brackets] (".../a[1]"); it stops at "(", which every link
# start has, so no start rescans past the next one (linear on hostile text).
_MD_LINK_RE = re.compile(r"!?\[([^\[\]\n]*)\]\((https?://(?:[^()\s\[\]]|\[[^\[\]\s()]*\])+)\)")
# Bold content holds no "**" (or "__"), for the same reason: "**a **a **a…" is linear.
_MD_STRONG = r"\*\*(?=\S)((?:[^*\n]|\*(?!\*))+?)(?<=\S)\*\*|__(?=\S)((?:[^_\n]|_(?!_))+?)(?<=\S)__"
_MD_EMPH_RE = re.compile(_MD_STRONG + r"|(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_MD_CODE_RE = re.compile(r"`([^`\n]+)`")
_URL_RE = re.compile(r"https?://[^\s<>\"'`\]\[{}|\\^]+", re.I)
_SPACE_RE = re.compile(r"\s+")
# TeX single quotes: `like this'
_TEX_SINGLE_QUOTE_RE = re.compile(r"`([^\s`'\\](?:[^`'\\\n]{0,200}[^\s`'\\])?)'(?!\w)")


def _math_to_text(expr: str) -> str:
    expr = latex_to_text(blackboard(expr.strip()))
    # sub/superscripts and grouping braces carry no words
    expr = expr.replace("^", "").replace("_", "").replace("{", "").replace("}", "")
    return expr


# Plain text of a field is asked for again and again: the index's document (and its title
# sort key), the snippets of every search, the similar-papers query and the export all start
# from it, and the index reads each paper an import has just read. A bounded cache computes
# each abstract once while it is in use. 10,000 seed abstracts (2026-12-02, best of 5):
# 146 ms computed and 159 ms through the cache the first time (hashing and storing), 277 ms
# against 153 ms when each is asked for twice, and 100 searches' snippets of the same 100
# abstracts 176 ms against 3.5 ms. Short texts (titles, names) cost less to compute than to
# look up, and long ones are no abstracts and would only crowd the cache: only lengths in
# between are cached. It holds the plain texts (the raw ones are the papers' own strings):
# about 1.5 MB for 1024 ordinary abstracts.
PLAIN_TEXT_CACHE_SIZE = 1024
PLAIN_TEXT_CACHED_LENGTHS = range(160, 6000)


def plain_text(raw: str) -> str:
    """What a reader should see: no LaTeX macros, no Markdown markup, one line.

    Abstract-sized texts are cached (see PLAIN_TEXT_CACHE_SIZE): computed once while in use.
    """
    if len(raw) in PLAIN_TEXT_CACHED_LENGTHS:
        return _cached_plain_text(raw)
    return _plain_text(raw)


def _plain_text(raw: str) -> str:
    text = raw
    # each step only runs when its trigger character is there: most abstracts
    # need two or three of them, and imports run this on every paper
    if "``" in text or "''" in text:
        text = text.replace("``", "\u201c").replace("''", "\u201d")
    if "--" in text:
        text = text.replace("---", "\u2014").replace("--", "\u2013")
    if "`" in text:
        text = _TEX_SINGLE_QUOTE_RE.sub("\u2018\\1\u2019", text)
    if "](" in text:
        text = _MD_LINK_RE.sub(lambda m: m.group(1) or m.group(2), text)
    if "$" in text:
        text = _MATH_RE.sub(lambda m: _math_to_text(m.group(1)), text)
    text = latex_to_text(text)
    if "`" in text:
        text = _MD_CODE_RE.sub(r"\1", text)
    if "*" in text or "__" in text:
        text = _MD_EMPH_RE.sub(lambda m: m.group(1) or m.group(2) or m.group(3), text)
    if "{" in text or "}" in text:
        # grouping braces that survive ({BayeSQP} in BibTeX style) are markup too
        text = _BRACE_RE.sub("", text)
    if not text.isascii() or "  " in text or not text.isprintable():
        return " ".join(text.split())
    return text.strip()


_BRACE_RE = re.compile(r"(?<!\\)[{}]")
_cached_plain_text = lru_cache(maxsize=PLAIN_TEXT_CACHE_SIZE)(_plain_text)
_COMBINING_RE = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
_NOT_ALNUM_RE = re.compile(r"[\W_]+")
_ASCII_NOT_ALNUM = bytes(b for b in range(128) if not chr(b).isalnum())


def clean_text(text: str) -> str:
    """Text that can be stored as UTF-8 JSON.

    File names and command-line arguments that are not valid UTF-8 reach
    Python with surrogate escapes, which JSON cannot hold; they are kept
    visible as backslash escapes instead of failing the whole operation.
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def fold(text: str) -> str:
    """Case- and accent-insensitive form: 'Mălan' and 'malan' fold alike."""
    text = text.casefold()
    if text.isascii():
        return text
    # casefold again after NFKD: "𝔼" decomposes to "E"
    return _COMBINING_RE.sub("", unicodedata.normalize("NFKD", text)).casefold()


def fingerprint_text(raw: str, plain: str | None = None) -> str:
    """Letters and digits only, folded: two copies of one abstract agree here
    whatever their whitespace, case, LaTeX, Markdown and punctuation."""
    text = fold(plain if plain is not None else plain_text(raw))
    # ASCII spaces and punctuation go as bytes (ten times faster than a regex
    # over the whole abstract); what non-ASCII is left is then small work
    text = text.encode("utf-8").translate(None, _ASCII_NOT_ALNUM).decode("utf-8")
    if not text.isascii():
        text = _NOT_ALNUM_RE.sub("", text)
    return text


def link_end(url: str, trail: str) -> int:
    """Where a link found in running text ends: trailing `trail` characters are
    punctuation after it, and so is each trailing ")" that opened nothing in it.

    Counted once, not once per character dropped (quadratic in "http://x))))…").
    """
    kept = len(url.rstrip(")" + trail))
    unmatched = max(0, url.count(")") - url.count("("))
    parens = [i for i in range(kept, len(url)) if url[i] == ")"]
    return kept if len(parens) <= unmatched else parens[-unmatched - 1] + 1


def find_links(raw: str) -> list[str]:
    """http(s) links in an abstract, in order, without trailing punctuation."""
    if "http" not in raw and "HTTP" not in raw:
        return []
    seen: dict[str, None] = {}
    for m in _URL_RE.finditer(raw):
        url = m.group(0).rstrip(".,;:!?*_'\"")
        url = url[: link_end(url, ".,;:!?*_")]
        if len(url) > len("https://x"):
            seen.setdefault(url, None)
    return list(seen)


# "https://doi.org/", "http://dx.doi.org/", "doi.org/", "doi:" and the like before a DOI
_DOI_PREFIX_RE = re.compile(r"^\s*(?:(?:https?://)?(?:dx\.)?doi\.org/|doi:\s*)", re.I)


def clean_doi(value: str) -> str:
    """A DOI without the "https://doi.org/", "http://dx.doi.org/" or "doi:" people put before it
    (the one rule for .bib and .ris imports and the viewer's links)."""
    value = value.strip()
    while True:
        cleaned = _DOI_PREFIX_RE.sub("", value, count=1).strip()
        if cleaned == value:
            return value
        value = cleaned
