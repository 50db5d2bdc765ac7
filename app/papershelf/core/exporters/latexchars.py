"""One character outside ASCII as LaTeX that pdfLaTeX typesets: pylatexenc's table.

pylatexenc's Unicode→LaTeX table is maintained and large, but some of its
answers need packages a bibliography's reader may not load (``\\nument``,
``\\varkappa``) or math commands outside math (``\\acute``). An answer is
used only when every command in it is one that LaTeX's kernel (with T1
fonts) or base math knows; a character it does not know is tried as its
base letter with combining accents (NFD), each accent spelt as pylatexenc
spells it on a letter that has it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

# text-mode commands of the LaTeX kernel (T1 and textcomp glyphs, built in since 2020) that
# pylatexenc's table uses; checked by compiling every answer (tests/test_bib_export_record.py)
_TEXT_MACROS = frozenset(
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
_MATH_MACROS = frozenset(
    """alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi varpi rho
    varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi
    Psi Omega pm mp times cdot leq geq neq approx infty rightarrow leftarrow in notin sum prod partial nabla
    forall exists emptyset cap cup subset supset subseteq supseteq equiv sim simeq propto perp mid parallel
    prime ldots cdots langle rangle surd""".split()
)
_MACRO_RE = re.compile(r"\\([A-Za-z]+|.)")
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
        return all(name in _MATH_MACROS for name in _MACRO_RE.findall(latex[len("{\\ensuremath") :]))
    return all(name in _TEXT_MACROS for name in _MACRO_RE.findall(latex))


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
