"""An abstract's markup, read three ways (no Qt here): `plain_text` (one line: titles, the
index, fingerprints, exports), `abstract_html` (the viewer) and `reader_text` (`show`).

Abstracts arrive as pasted from web pages: a mix of LaTeX (`\\textsc{X}`, `$\\Delta$`),
Markdown (`**bold**`, `[text](url)`) and bare specials (`%`, `&`, `_`); the raw abstract is
always kept as imported. The markup's rules (links, math, code, emphasis, TeX's quotes) are
written here once; the LaTeX macros are read by biblio.latex.

In the viewer's HTML, LaTeX text macros become formatting (`\\textbf` bold, `\\emph`/`\\textit`
italic, `\\textsc` small capitals, `\\texttt` monospace), math in `$…$`
becomes Unicode with sub- and superscripts, Markdown emphasis, code and
links are honoured, bare http(s) links become links, and words matching
the search are marked. Everything that comes from the abstract is
HTML-escaped: an abstract holding `<script>` shows that text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from functools import lru_cache

from .biblio.latex import blackboard, latex_to_text, typography

_PLAIN_MATH_RE = re.compile(r"(?<!\\)\$\$?(.+?)(?<!\\)\$\$?", re.S)
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
    text = typography(text)
    if "`" in text:
        text = _TEX_SINGLE_QUOTE_RE.sub("\u2018\\1\u2019", text)
    if "](" in text:
        text = _MD_LINK_RE.sub(lambda m: m.group(1) or m.group(2), text)
    if "$" in text:
        text = _PLAIN_MATH_RE.sub(lambda m: _math_to_text(m.group(1)), text)
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


_cached_plain_text = lru_cache(maxsize=PLAIN_TEXT_CACHE_SIZE)(_plain_text)


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


_PH = "\x00"  # placeholder brackets for finished HTML pieces
_OPEN, _CLOSE = "\x01", "\x02"  # style markers: \x01b\x02 … \x01/b\x02

# fmt: off
_STYLE_MACROS = {
    "textbf": "b", "mathbf": "b", "boldsymbol": "b", "bm": "b",
    "textit": "i", "emph": "i", "mathit": "i", "textsl": "i",
    "textsc": "sc", "texttt": "tt", "mathtt": "tt", "underline": "u",
}
# fmt: on
_STYLE_RE = re.compile(r"\\(" + "|".join(_STYLE_MACROS) + r")\s*\{([^{}]*)\}")
_HREF_RE = re.compile(r"\\href\s*\{(https?://[^{}\s]+)\}\s*\{([^{}]*)\}")
_URL_MACRO_RE = re.compile(r"\\url\s*\{(https?://[^{}\s]+)\}")
_MATH_RE = re.compile(r"(?<!\\)(\$\$?)(.+?)(?<!\\)\1", re.S)
_MD_STRONG_RE = re.compile(_MD_STRONG)
_MD_EM_RE = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])|(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])")
_SCRIPT_RE = re.compile(r"([_^])(?:\{([^{}]*)\}|(\\[A-Za-z]+|[A-Za-z0-9+\-*]))")
_BRACE_RE = re.compile(r"(?<!\\)[{}]")
_MARK_RE = re.compile(_OPEN + r"(/?)(\w+)" + _CLOSE)
_PH_RE = re.compile(_PH + r"(\d+)" + _PH)
_SCRIPT_PH_RE = re.compile(_PH + r"s(\d+)" + _PH)
# words to highlight; entities and style markers are matched first, to be left alone
_WORD_RE = re.compile(_PH + r"s?\d+" + _PH + "|&#?\\w+;|" + _OPEN + r"/?\w+" + _CLOSE + r"|\w+(?:[.'’]\w+)*")

# fmt: off
_TAGS = {
    "b": ("<b>", "</b>"), "i": ("<i>", "</i>"), "u": ("<u>", "</u>"),
    "sc": ('<span style="font-variant:small-caps">', "</span>"),
    "tt": ("<code>", "</code>"),
}
# fmt: on


def abstract_html(raw: str, terms: set[str] | None = None, normal: Callable[[str], str] | None = None) -> str:
    """The abstract as HTML; words whose `normal(word)` is in `terms` are marked
    with <span class="match">."""
    pieces: list[str] = []

    def keep(fragment_html: str) -> str:
        pieces.append(fragment_html)
        return f"{_PH}{len(pieces) - 1}{_PH}"

    def link(url: str, label: str) -> str:
        return keep(f'<a href="{html.escape(url, quote=True)}">{html.escape(label, quote=False)}</a>')

    text = raw.replace(_PH, "").replace(_OPEN, "").replace(_CLOSE, "")
    text = _HREF_RE.sub(lambda m: link(m.group(1), latex_to_text(m.group(2))), text)
    text = _URL_MACRO_RE.sub(lambda m: link(m.group(1), m.group(1)), text)
    text = _MD_LINK_RE.sub(lambda m: link(m.group(2), m.group(1) or m.group(2)), text)
    text = _URL_RE.sub(lambda m: _bare_link(m.group(0), link), text)
    maths: dict[str, str] = {}  # "$a$ $a$ …": each expression is converted once

    def math(expr: str) -> str:
        if expr not in maths:
            maths[expr] = _math_html(expr)
        return keep(maths[expr])

    text = _MATH_RE.sub(lambda m: math(m.group(2)), text)
    text = _MD_CODE_RE.sub(lambda m: keep(f"<code>{html.escape(m.group(1), quote=False)}</code>"), text)
    for _ in range(4):  # nested \textbf{\emph{x}}
        new = _STYLE_RE.sub(lambda m: _mark(_STYLE_MACROS[m.group(1)], m.group(2)), text)
        if new == text:
            break
        text = new
    text = _MD_STRONG_RE.sub(lambda m: _mark("b", m.group(1) or m.group(2)), text)
    text = _MD_EM_RE.sub(lambda m: _mark("i", m.group(1) or m.group(2)), text)
    text = typography(text)
    text = _TEX_SINGLE_QUOTE_RE.sub("\u2018\\1\u2019", text)
    text = latex_to_text(text)
    text = _BRACE_RE.sub("", text).replace("\\{", "{").replace("\\}", "}")
    text = " ".join(text.split())
    out = html.escape(text, quote=False)
    if terms and normal:

        def mark(m: re.Match[str]) -> str:
            word = m.group(0)
            if word[0] in "&" + _OPEN + _PH or normal(word) not in terms:
                return word
            return f'<span class="match">{word}</span>'

        out = _WORD_RE.sub(mark, out)
    out = _MARK_RE.sub(lambda m: _TAGS[m.group(2)][1 if m.group(1) else 0], out)
    return _PH_RE.sub(lambda m: pieces[int(m.group(1))], out)


def _mark(style: str, inner: str) -> str:
    return f"{_OPEN}{style}{_CLOSE}{inner}{_OPEN}/{style}{_CLOSE}"


def _bare_link(url: str, link: Callable[[str, str], str]) -> str:
    url, ph, rest = url.partition(_PH)  # a finished piece (a link) right after the URL is not part of it
    end = link_end(url, ".,;:!?*_'\"")
    return link(url[:end], url[:end]) + url[end:] + ph + rest


def _math_html(expr: str) -> str:
    """Math as Unicode text: symbols, blackboard letters, sub- and superscripts."""
    expr = blackboard(expr)
    scripts: list[tuple[str, str]] = []

    def script(m: re.Match[str]) -> str:
        scripts.append(("sup" if m.group(1) == "^" else "sub", m.group(2) if m.group(2) is not None else m.group(3)))
        return f"{_PH}s{len(scripts) - 1}{_PH}"

    done: dict[tuple[str, str], str] = {}  # "x^2 … x^2": each script is converted once

    def script_html(m: re.Match[str]) -> str:
        script = scripts[int(m.group(1))]
        if script not in done:
            tag, inner = script
            done[script] = f"<{tag}>{html.escape(_BRACE_RE.sub('', latex_to_text(inner)), quote=False)}</{tag}>"
        return done[script]

    expr = _SCRIPT_RE.sub(script, expr)
    body = html.escape(_BRACE_RE.sub("", latex_to_text(expr)), quote=False)
    # one pass for all scripts: a str.replace per script is quadratic in "x^x^x^…"
    body = _SCRIPT_PH_RE.sub(script_html, body)
    return f'<span class="math">{body.strip()}</span>'


_PARAGRAPH_RE = re.compile(r"\n\s*\n")
_HTML_SCRIPT_RE = re.compile(r"<(sup|sub)>(.*?)</\1>")  # not _SCRIPT_RE: that is the math reader's
_LINK_TAG_RE = re.compile(r'<a href="([^"]*)">(.*?)</a>')
_TAG_RE = re.compile(r"<[^>]+>")


def reader_text(raw: str) -> str:
    """A title, venue or abstract as the reader's plain text (`show` prints it): the viewer's
    reading (`abstract_html`) without its markup: `\\emph{deep}` → deep, `$O(n^2)$` → O(n^2),
    `[the code](https://…)` → the code (https://…); an abstract's paragraphs kept apart."""
    return "\n\n".join(t for t in (_paragraph_text(p) for p in _PARAGRAPH_RE.split(raw)) if t)


def _paragraph_text(raw: str) -> str:
    if not raw.strip():
        return ""
    out = abstract_html(raw)
    if "<" in out:
        out = _HTML_SCRIPT_RE.sub(lambda m: ("^" if m.group(1) == "sup" else "_") + _script(m.group(2)), out)
        out = _LINK_TAG_RE.sub(
            lambda m: m.group(2) if m.group(2) == m.group(1) else f"{m.group(2)} ({m.group(1)})", out
        )
        out = _TAG_RE.sub("", out)
    return " ".join(html.unescape(out).split())


def _script(inner: str) -> str:
    text = _TAG_RE.sub("", inner)
    return text if len(text) == 1 else "{" + text + "}"
