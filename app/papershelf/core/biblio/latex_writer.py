"""Unicode → LaTeX: the one writer of every module that writes LaTeX (its reader is latex.py).

`latex_char` is one character as LaTeX that pdfLaTeX typesets: pylatexenc's Unicode→LaTeX table,
which is maintained and large, but some of its answers need packages a bibliography's reader may
not load (``\\nument``, ``\\varkappa``) or math commands outside math (``\\acute``). An answer is
used only when every command in it is one that LaTeX's kernel (with T1 fonts) or base math knows;
a character it does not know is tried as its base letter with combining accents (NFD), each
accent spelt as pylatexenc spells it on a letter that has it.

`LatexWriter` writes text in an export's dialect (`bibtex`: ASCII; `biblatex`: UTF-8 for biber,
Latin letters kept). `text_to_latex` writes typed text as a braced value (specials escaped,
letters kept), as an import from RIS, the editor and a record found online do.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from ..limits import strip_controls
from .latex import MATHBB_RE, SYMBOLS, braces_balanced

# ---- writing: one character ----

# text-mode commands of the LaTeX kernel (T1 and textcomp glyphs, built in since 2020) that
# pylatexenc's table uses; checked by compiling every answer (tests/test_bib_export_record.py)
_KERNEL_TEXT_MACROS = frozenset(
    """' ` ^ " ~ = . , ; - H c k r u v d b t i j ss SS ae AE o O l L oe OE aa AA th TH dh DH dj DJ ng NG ij IJ
    guillemotleft guillemotright guilsinglleft guilsinglright quotedblbase quotesinglbase
    textasciiacute textasciidieresis textasciimacron textasteriskcentered textbrokenbar textbullet textcent
    textcopyright textcurrency textdagger textdaggerdbl textdegree textdiscount textdiv textellipsis textemdash
    textendash textexclamdown textflorin textfractionsolidus textinterrobang textlnot textmu textonehalf
    textonequarter textonesuperior textordfeminine textordmasculine textparagraph textperiodcentered
    textpertenthousand textperthousand textquestiondown textquotedblleft textquotedblright textquoteleft
    textquoteright textreferencemark textregistered textsection textsterling textthreequarters
    textthreesuperior texttimes texttwosuperior textyen texttrademark""".split()
)
# inside \\ensuremath: base LaTeX's math (no amssymb)
_KERNEL_MATH_MACROS = frozenset(
    """alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi varpi rho
    varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi
    Psi Omega pm mp times cdot leq geq neq approx infty rightarrow leftarrow in notin sum prod partial nabla
    forall exists emptyset cap cup subset supset subseteq supseteq equiv sim simeq propto perp mid parallel
    prime ldots cdots langle rangle surd""".split()
)
_ANY_MACRO_RE = re.compile(r"\\([A-Za-z]+|.)")
_ENCODER: Any = None


def _encoder() -> Any:
    global _ENCODER
    if _ENCODER is None:
        from pylatexenc.latexencode import UnicodeToLatexEncoder  # type: ignore[import-untyped]

        _ENCODER = UnicodeToLatexEncoder(
            non_ascii_only=True,
            replacement_latex_protection="braces-all",  # {\'e}: BibTeX sees one special character
            unknown_char_policy="keep",
            unknown_char_warning=False,
        )
    return _ENCODER


def _usable(latex: str) -> bool:
    if not latex.isascii():
        return False
    if latex.startswith("{\\ensuremath{"):
        return all(name in _KERNEL_MATH_MACROS for name in _ANY_MACRO_RE.findall(latex[len("{\\ensuremath") :]))
    return all(name in _KERNEL_TEXT_MACROS for name in _ANY_MACRO_RE.findall(latex))


@lru_cache(maxsize=4096)
def pylatexenc_char(ch: str) -> str | None:
    """pylatexenc's LaTeX for one character when pdfLaTeX can typeset it, else None."""
    latex: str = _encoder().unicode_to_latex(ch)
    return latex if latex != ch and _usable(latex) else None


@lru_cache(maxsize=256)
def _accent(mark: str) -> str | None:
    """The accent command of a combining mark, as pylatexenc writes it on a letter with it."""
    for base in "oaecunszgiCG":
        composed = unicodedata.normalize("NFC", base + mark)
        if len(composed) != 1:
            continue
        latex = pylatexenc_char(composed)
        m = re.fullmatch(r"\{\\([^A-Za-z\s]|[A-Za-z]+)\s*\{?\\?" + base + r"\}?\}", latex or "")
        if m:
            return m.group(1)
    return None


@lru_cache(maxsize=4096)
def latex_char(ch: str) -> str | None:
    """One non-ASCII character (or a letter and its combining accents) as braced LaTeX that
    pdfLaTeX typesets ({\\"u}, {\\L}, {\\textendash}), or None when there is none (CJK, emoji)."""
    latex = pylatexenc_char(unicodedata.normalize("NFC", ch))
    if latex is not None:
        return latex
    decomposed = unicodedata.normalize("NFD", ch)
    base, marks = decomposed[0], decomposed[1:]
    if not (base.isascii() and base.isalpha() and marks):
        return None
    out = r"\i" if base == "i" else base
    for mark in marks:
        cmd = _accent(mark)
        if cmd is None:
            return None
        out = f"\\{cmd}{{{out}}}"
    return "{" + out + "}"


# ---- writing: text in a dialect ----

DIALECTS = ("bibtex", "biblatex")

# fmt: off
_SPECIALS = {
    # \{ would still close a field for BibTeX, which counts braces without looking at backslashes
    "\\": r"\textbackslash{}", "{": r"\textbraceleft{}", "}": r"\textbraceright{}", "$": r"\$", "&": r"\&", "%": r"\%",
    "#": r"\#", "_": r"\_", "^": r"\textasciicircum{}", "~": r"\textasciitilde{}", "<": r"\textless{}",
    ">": r"\textgreater{}", "|": r"\textbar{}",
}
# fmt: on
_SPECIAL_RE = re.compile(r"[\\{}$&%#_^~<>|\x00-\x1f\x7f]")


def _escape_special(m: re.Match[str]) -> str:
    return _SPECIALS.get(m.group(), " ")  # control characters become spaces


_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]")
# a letter with combining accents NFC has no single character for (q̃) goes as one piece; the
# plain pattern is the one nearly every text needs, and much the faster
_COMBINING_RE = re.compile(r"[\u0300-\u036f]")
_NON_ASCII_MARKS_RE = re.compile(r"[A-Za-z]?[\u0300-\u036f]+|[^\x00-\x7f]")


def _non_ascii(text: str) -> tuple[str, re.Pattern[str]]:
    """`text` in NFC, and the pattern of its pieces outside ASCII."""
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text, (_NON_ASCII_MARKS_RE if _COMBINING_RE.search(text) else _NON_ASCII_RE)


# fmt: off
_PUNCT = {"\u201c": "``", "\u201d": "''", "\u2018": "`", "\u2019": "'", "\u2013": "--", "\u2014": "---",
          "\u2026": r"{\ldots}", "\u00a0": "~", "\u2009": r"{\,}", "\u00ab": r"{\guillemotleft}",
          "\u00bb": r"{\guillemotright}", "\u00a7": r"{\S}", "\u00b6": r"{\P}", "\u00a9": r"{\textcopyright}",
          "\u00b0": r"{\textdegree}", "\u2022": r"{\textbullet}", "\u20ac": r"{\texteuro}", "\u00a3": r"{\pounds}"}
# fmt: on
_MATH_SYMBOLS = {
    v: k
    for k, v in SYMBOLS.items()
    if len(v) == 1 and not v.isascii() and k.isalpha() and k not in ("ss", "ae", "o", "O", "aa", "l", "L", "i")
}
# fmt: off
_MATH_SYMBOLS.update({"×": "times", "·": "cdot", "≤": "leq", "≥": "geq", "±": "pm", "→": "rightarrow",
                      "∞": "infty", "≈": "approx", "≠": "neq", "∈": "in", "÷": "div", "√": "surd",
                      "′": "prime", "−": "-"})
# fmt: on
# text-mode commands among them (\\textendash, \\pounds, \\S) are no math: _PUNCT or pylatexenc writes those
MATH_SYMBOLS = {
    ch: name
    for ch, name in _MATH_SYMBOLS.items()
    if not name.startswith("text") and name not in ("pounds", "S", "P", "guillemotleft", "guillemotright")
}
del _MATH_SYMBOLS


class LatexWriter:
    """Text to one dialect's LaTeX; counts the characters it had to write as "?" (`replaced`)
    and the values that held control characters, left out (`controls`: core.limits)."""

    def __init__(self, dialect: str) -> None:
        if dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {dialect!r}; use one of: {', '.join(DIALECTS)}")
        self.dialect = dialect
        self.replaced = 0
        self.controls = 0

    def clean(self, value: str) -> str:
        """`value` without control characters (core.limits), counted when it held some."""
        out = strip_controls(value)
        if out is not value and out != value:
            self.controls += 1
        return out

    def char(self, ch: str) -> str:
        """One character outside plain ASCII text (or a letter and its combining accents), as
        the dialect writes it: by the tables first, then pylatexenc's, else "?" (counted)."""
        out = self._by_tables(ch)
        if out is None:
            out = self._by_pylatexenc(ch)
        if out is None:
            self.replaced += 1
            return "?"
        return out

    def _by_tables(self, ch: str) -> str | None:
        """The specials, ASCII, what biber takes as UTF-8, punctuation, math symbols, spaces."""
        if ch in _SPECIALS:
            return _SPECIALS[ch]
        if ch.isascii():
            return ch if ch.isprintable() else " "
        if self.dialect == "biblatex" and _utf8_for_biber(ch):
            return ch  # Latin letters, quotes, dashes: UTF-8 for biber
        if ch in _PUNCT:
            return _PUNCT[ch]
        if ch in MATH_SYMBOLS:
            name = MATH_SYMBOLS[ch]
            # braced: two in a row must not make "$$" (display math)
            return "{$-$}" if name == "-" else f"{{$\\{name}$}}"
        if len(ch) == 1 and unicodedata.category(ch).startswith("Z"):
            return " "
        return None

    def _by_pylatexenc(self, ch: str) -> str | None:
        """A letter under accents, or any other character pylatexenc's table (or NFKC) spells."""
        if len(ch) > 4:
            # a letter under more accents than any script stacks (a hostile run of combining
            # marks): the letter alone, counted, instead of a conversion as long as the run
            self.replaced += 1
            return self.char(ch[0]) if not ch[0].isascii() else ch[0]
        if len(ch) > 1 and self.dialect == "biblatex" and ch[0].isascii():
            # a letter with an accent Unicode has no single character for: biber would turn
            # its LaTeX back into a combining accent, which pdfLaTeX cannot typeset
            self.replaced += 1
            return ch[0]
        latex = latex_char(ch)
        if latex is not None:
            return latex
        compat = unicodedata.normalize("NFKC", ch)
        if compat != ch and compat.isascii():
            return self.text(compat)
        return None

    def raw(self, value: str, as_written: bool = False) -> str:
        """A record's value expression: as a .bib file wrote it (`as_written`) in both dialects;
        a value made from text (a RIS record's) with its characters outside ASCII as the dialect
        writes typed text (`char`: LaTeX for BibTeX; Latin letters kept for biber, the rest that
        pdflatex cannot take as LaTeX), NFC first, the LaTeX already there untouched. Control
        characters never (core.limits)."""
        value = self.clean(value)
        if as_written or value.isascii():
            return value
        value, pattern = _non_ascii(value)
        return pattern.sub(lambda m: self._raw_char(m.group()), value)

    def _raw_char(self, ch: str) -> str:
        if ch in MATH_SYMBOLS:  # \ensuremath: the file may have put it in math already
            name = MATH_SYMBOLS[ch]
            return "{\\ensuremath{-}}" if name == "-" else f"{{\\ensuremath{{\\{name}}}}}"
        return self.char(ch)

    def text(self, text: str) -> str:
        """Plain text with LaTeX's specials escaped and non-ASCII written as the dialect wants."""
        # control characters out (core.limits), then specials, tabs and line ends through one
        # C-level translate; only what is left outside ASCII goes through char() one by one
        text = self.clean(text)
        out = _SPECIAL_RE.sub(_escape_special, text) if _SPECIAL_RE.search(text) else text
        if not out.isascii():
            out, pattern = _non_ascii(out)
            out = pattern.sub(lambda m: self.char(m.group()), out)
        return out


def _utf8_for_biber(ch: str) -> bool:
    """Latin letters (not × ÷), curly quotes and dashes: biber reads them as UTF-8."""
    return ("\u00c0" <= ch <= "\u017f" and ch not in "\u00d7\u00f7") or ch in "\u2018\u2019\u201c\u201d\u2013\u2014"


# ---- writing: typed text as a braced value ----

_VALUE_SPECIAL_RE = re.compile(r"[\\{}$&%#_^~]")
_CASE_WORD_RE = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")


def text_to_latex(text: str, protect_case: bool = False) -> str:
    """Plain text as the LaTeX of a braced BibTeX value: specials escaped, non-ASCII as it is;
    with `protect_case`, words with a capital after their first letter are braced so that a
    style lower-casing titles leaves them (BERT, iPhone). (An import from RIS, a record typed
    in the editor or found online.)"""
    balanced = braces_balanced(text)
    if not protect_case:
        return _escape_value(text, balanced)
    out, pos = [], 0
    for m in _CASE_WORD_RE.finditer(text):
        word = m.group()
        if any(ch.isupper() for ch in word[1:]):
            out.append(_escape_value(text[pos : m.start()], balanced))
            out.append("{" + _escape_value(word, balanced) + "}")
            pos = m.end()
    out.append(_escape_value(text[pos:], balanced))
    return "".join(out)


def _escape_value(text: str, balanced: bool) -> str:
    if not _VALUE_SPECIAL_RE.search(text):
        return text

    def one(m: re.Match[str]) -> str:
        ch = m.group()
        if ch == "\\":
            return r"\textbackslash{}"
        if ch in "{}":
            # BibTeX counts braces without looking at backslashes: \{ only when they pair up
            return "\\" + ch if balanced else (r"\textbraceleft{}" if ch == "{" else r"\textbraceright{}")
        if ch == "^":
            return r"\textasciicircum{}"
        if ch == "~":
            return r"\textasciitilde{}"
        return "\\" + ch

    return _VALUE_SPECIAL_RE.sub(one, text)


def text_latex(text: str, protect_case: bool = False, protected: Iterable[str] = ()) -> str:
    """Typed text as the LaTeX of a braced value: specials escaped (`& % $ # _ ~ ^ \\`), the
    letters kept; braces that pair up are kept as BibTeX's groups (`{DNA}` keeps its case,
    as in a .bib file), and with `protect_case` words with inner capitals and the `protected`
    phrases (those the old value had braced) are braced."""
    if not braces_balanced(text):
        return text_to_latex(text, protect_case)
    for phrase in sorted(set(protected), key=len, reverse=True):
        if phrase and phrase in text:
            text = re.sub(
                r"(?<![\w{])" + re.escape(phrase) + r"(?![\w}])", "{" + phrase.replace("\\", "\\\\") + "}", text
            )
    out, depth = [], 0
    for piece in re.split(r"([{}])", text):
        if piece in ("{", "}"):
            depth += 1 if piece == "{" else -1
            out.append(piece)
        elif piece:
            out.append(text_to_latex(piece, protect_case and depth == 0))
    return "".join(out)


# ---- writing: math ----

# base LaTeX's math (no amssymb) that an abstract's $…$ may keep
_SAFE_MATH_MACROS = frozenset(
    """alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa
lambda mu nu xi pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda
Xi Pi Sigma Upsilon Phi Psi Omega times cdot cdots ldots dots leq le geq ge neq ne approx sim simeq equiv propto
infty pm mp to rightarrow leftarrow Rightarrow Leftarrow leftrightarrow mapsto in notin subset subseteq supset
cup cap forall exists partial nabla sum prod int oint sqrt frac log ln exp min max sup inf lim arg det dim sin
cos tan ell circ star ast emptyset top bot perp mid parallel langle rangle lfloor rfloor lceil rceil mathrm
mathbf mathit mathsf mathtt mathcal quad qquad left right big Big prime hat bar tilde vec dot ddot overline
underline widehat widetilde Pr neg wedge vee oplus otimes setminus colon""".split()
)
_SAFE_MATH_CHARS_RE = re.compile(r"^[A-Za-z0-9 \t\n+\-*/=<>()\[\],.;:!'|^_{}\\]*$", re.ASCII)
_SCRIPT_ARG = r"(?:\{[^{}]*\}|\\[A-Za-z]+|[^\s{}\\])"
# constructs LaTeX stops on: x_1_2, x^, x_}, \frac or \sqrt without an argument
_BAD_MATH_RE = re.compile(
    r"_" + _SCRIPT_ARG + r"\s*_|\^" + _SCRIPT_ARG + r"\s*\^|[_^]\s*(?:$|[_^}\])])"
    r"|\\(?:frac|sqrt)(?![A-Za-z])\s*(?:$|[^{\[\sA-Za-z0-9\\])|\\frac\s*\{[^{}]*\}\s*(?:$|[^{\s])"
)


def math_latex(expr: str) -> tuple[str, bool]:
    """An abstract's math (between its `$`) as base LaTeX writes it (`\\mathbb` as `\\mathbf`:
    base LaTeX has no blackboard bold), and whether LaTeX alone typesets it (not when it needs a
    package or a repair: `x_1_2`, an unbalanced brace or `\\left`)."""
    expr = MATHBB_RE.sub(r"\\mathbf{\1}", expr).strip()
    names = {m.group(1) for m in _ANY_MACRO_RE.finditer(expr)}
    safe = (
        bool(expr)
        and braces_balanced(expr, escapes=True)
        and bool(_SAFE_MATH_CHARS_RE.match(expr))
        and not _BAD_MATH_RE.search(expr)
        and expr.count("\\left") == expr.count("\\right")
        and all(n in _SAFE_MATH_MACROS or n in ",;:! " for n in names)
    )
    return expr, safe
