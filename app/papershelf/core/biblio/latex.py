"""LaTeX → the reader's text: the one LaTeX reader (its writer is latex_writer.py).

A field of a .bib file is kept as its BibTeX value expression (`{The {CGAL} Project}`,
`"Ann"`, `jan`, `1995`, `{Proc. } # jan`; see BIBLIOGRAPHIC RECORD in paper.py). `decode` turns
one into a line of text the way BibTeX and LaTeX would print it: pieces joined, month macros
spelled out, braces gone, LaTeX decoded by pylatexenc (a maintained decoder, rather than a table
of our own) behind fast paths (`latex_text`). An abstract pasted from a web page mixes a little
LaTeX into prose (`\\textsc{X}`, `\\alpha`, `\\"u`): `latex_to_text` reads its macros by a table
(every abstract of an import goes through it, too many for pylatexenc), its unknown macros by
their names. Both read accents by one table (ACCENTS).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

# BibTeX's standard styles define these month macros (plain.bst: MACRO {jan} {"January"} …)
MONTHS = {
    "jan": "January",
    "feb": "February",
    "mar": "March",
    "apr": "April",
    "may": "May",
    "jun": "June",
    "jul": "July",
    "aug": "August",
    "sep": "September",
    "oct": "October",
    "nov": "November",
    "dec": "December",
}
MONTH_MACROS = tuple(MONTHS)  # jan … dec: month n is MONTH_MACROS[n - 1]


def pieces(raw: str) -> list[str]:
    """The parts of a value expression joined by `#`, each stripped (`{a} # jan` → [`{a}`, `jan`]).

    A `#` inside braces or quotes is text, not concatenation.
    """
    if "#" not in raw:
        return [raw.strip()]
    parts: list[str] = []
    depth, quoted, start = 0, False, 0
    for i, ch in enumerate(raw):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        elif ch == '"' and depth == 0:
            quoted = not quoted
        elif ch == "#" and depth == 0 and not quoted:
            parts.append(raw[start:i].strip())
            start = i + 1
    parts.append(raw[start:].strip())
    return parts


def braces_balanced(text: str, escapes: bool = False) -> bool:
    """Whether every brace of `text` is closed in order. BibTeX counts braces without looking at
    backslashes (so does a .bib value); with `escapes`, `\\{` and `\\}` are not counted, as in
    LaTeX's math."""
    depth = 0
    escaped = False
    for ch in text:
        if escaped:
            escaped = False
        elif ch == "\\" and escapes:
            escaped = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def piece_text(piece: str) -> str:
    """The LaTeX text of one piece: a braced or quoted string without its delimiters, a
    number as is, a month macro spelled out, any other macro (not defined in the file) by its name."""
    if len(piece) >= 2 and ((piece[0] == "{" and piece[-1] == "}") or (piece[0] == '"' and piece[-1] == '"')):
        return piece[1:-1]
    return MONTHS.get(piece.lower(), piece)


def decode(raw: str) -> str:
    """A BibTeX value expression as one line of the reader's text (`{Garc{\\'\\i}a} # jan` → "GarcíaJanuary")."""
    if not raw:
        return ""
    return latex_text("".join(piece_text(p) for p in pieces(raw)))


def latex_text(text: str) -> str:
    """LaTeX text (a value without its delimiters) as one line of plain text."""
    # pylatexenc costs ~340 µs a call (more under load) and 10,000 titles are mostly distinct:
    # values without a macro, and values whose only macros are symbols (\ldots{}, \%, \&) and
    # accents on ASCII letters ({\"u}, \'{e}), take a path of a few µs that gives what
    # pylatexenc gives (tests/test_bib_import_record.py compares the two on real files)
    if "\\" in text:
        simple = _simple_macros(text)
        if simple is None:
            return _latex_text(text)
        text = simple
    elif "$" in text:
        return _latex_text(text)
    elif "~" in text:
        text = text.replace("~", " ")
    if "{" in text or "}" in text:
        text = text.replace("{", "").replace("}", "")
    return typography(" ".join(text.split()))


# accents of LaTeX's text mode, as Unicode combining characters: the one table of both readings
ACCENTS = {
    "`": "\u0300", "'": "\u0301", "^": "\u0302", "~": "\u0303", "=": "\u0304", "u": "\u0306",
    ".": "\u0307", '"': "\u0308", "r": "\u030a", "H": "\u030b", "v": "\u030c", "d": "\u0323",
    "c": "\u0327", "k": "\u0328", "b": "\u0331",
}  # fmt: skip
# an accent on one ASCII letter: \'e, \'{e}, \'{ e }, \c{c}, \c c; the letter accents only as whole
# control words, so \varepsilon and \bar stay themselves (\'\i and the like go to pylatexenc)
_ACCENT_RE = re.compile(r"""\\(['`^"~=.]|[uvHrdckb](?![A-Za-z]))\s*(?:\{\s*([A-Za-z])\s*\}|([A-Za-z]))""")
# a control word eats the spaces after it (and an empty group ends it); a control symbol does not
_SYMBOL_RE = re.compile(r"\\(?:([A-Za-z]+)(?:\{\}|\s*)|([^A-Za-z]))")


def _simple_macros(text: str) -> str | None:
    """The text with its accents and symbol macros replaced, or None when it holds any other
    macro (then pylatexenc reads it whole)."""
    if "$" in text.replace("\\$", "") or "\\\\" in text:
        return None  # math, a line break or an escaped backslash: pylatexenc knows
    text = _ACCENT_RE.sub(_accented, text)
    if "~" in text:  # a tie is a space; the accent \~ is gone by now, and \textasciitilde prints "~"
        text = text.replace("~", " ")
    if "\\" not in text:
        return unicodedata.normalize("NFC", text)
    symbols = _symbols()
    ok = True

    def symbol(m: re.Match[str]) -> str:
        nonlocal ok
        repl = symbols.get(m.group(1) or m.group(2))
        if repl is None:
            ok = False
            return ""
        return repl

    text = _SYMBOL_RE.sub(symbol, text)
    return unicodedata.normalize("NFC", text) if ok else None


def _accented(m: re.Match[str]) -> str:
    """The letter of an _ACCENT_RE match with its accent as a combining character."""
    return (m.group(2) or m.group(3)) + ACCENTS[m.group(1)]


@lru_cache(maxsize=1)
def _symbols() -> dict[str, str]:
    r"""The macros pylatexenc (with our additions) prints as a fixed text and that take no
    argument: \ldots → …, \% → %, \ss → ß, \textendash → –, \- → nothing."""
    converter, walker_db = _converter()
    out: dict[str, str] = {}
    for spec in converter.latex_context.iter_macro_specs():
        name = spec.macroname
        repl = spec.simplify_repl
        # a brace it prints would be taken for a group's brace by the fast path: pylatexenc's job
        if name in out or not isinstance(repl, str) or "%" in repl or name in "{}" or repl in ("{", "}"):
            continue
        parser_spec = walker_db.get_macro_spec(name)
        if parser_spec is not None and getattr(parser_spec.args_parser, "argspec", "") != "":
            continue
        out[name] = repl
    # escaped specials print themselves (pylatexenc's own table gives them as functions)
    out.update({c: c for c in "%&_#$"})
    return out


def typography(text: str) -> str:
    """TeX's ligatures for dashes and quotes (`--` –, `---` —, ``` `` ``` “, `''` ”), as pylatexenc makes them."""
    if "--" in text:
        text = text.replace("---", "\u2014").replace("--", "\u2013")
    if "``" in text or "''" in text:
        text = text.replace("``", "\u201c").replace("''", "\u201d")
    return text


_UNESCAPED_SPECIAL_RE = re.compile(r"(?<!\\)([%&])")


@lru_cache(maxsize=4096)
def _latex_text(text: str) -> str:
    # In a .bib value "%" and "&" are characters, not a comment and an alignment tab: LaTeX
    # would print them only escaped, but people write "50%" and "Computers & Typesetting".
    if "%" in text or "&" in text:
        text = _UNESCAPED_SPECIAL_RE.sub(r"\\\1", text)
    try:
        converter, walker_db = _converter()
        out = str(converter.latex_to_text(text, latex_context=walker_db, tolerant_parsing=True))
    except Exception:  # pylatexenc is lenient; a value it still cannot read is shown as written
        out = text.replace("{", "").replace("}", "")
    # a discretionary hyphen (\-) is no character; a tie (~) and a thin space (\,) are spaces
    out = out.replace("\u00ad", "")
    return " ".join(out.split())


@lru_cache(maxsize=1)
def _converter() -> tuple[Any, Any]:
    """pylatexenc's converter and its parser's macro table, set up once (~50 ms)."""
    # pylatexenc ships no type information
    from pylatexenc import latexwalker, macrospec  # type: ignore[import-untyped]
    from pylatexenc.latex2text import (  # type: ignore[import-untyped]
        LatexNodes2Text,
        MacroTextSpec,
        get_default_latex_context_db,
    )

    class _Converter(LatexNodes2Text):  # type: ignore[misc]
        """Unknown macros keep their name (or, when a group follows, show that argument)
        instead of vanishing and running the next word into the previous one."""

        def macro_node_to_text(self, node: Any) -> str:
            if self.latex_context.get_macro_spec(node.macroname) is not None:
                return str(super().macro_node_to_text(node))
            args = [a for a in (node.nodeargd.argnlist if node.nodeargd else None) or [] if a is not None]
            if args:  # a macro the parser knows (\mbox{x}) but the text table does not: its arguments
                return "".join(str(self._groupnodecontents_to_text(a)) for a in args)
            s, end = node.parsing_state.s, node.pos + node.len
            if s[end : end + 1] == "{":
                return ""  # \foo{arg}: the group after it is printed
            return "\\" + str(node.macroname) + str(node.macro_post_space)

    walker_db = latexwalker.get_default_latex_context_db()
    # \noopsort{1973b}1972 (the BibTeX manual's sorting trick, defined in @preamble) prints nothing
    walker_db.add_context_category(
        "papershelf-bibtex",
        macros=[
            macrospec.MacroSpec("noopsort", "{"),
            # links: \href{url}{text} shows its text, \url{url} the address
            macrospec.MacroSpec("href", "{{"),
            macrospec.MacroSpec("url", "{"),
        ],
        prepend=True,
    )
    text_db = get_default_latex_context_db()
    text_db.add_context_category(
        "papershelf-bibtex",
        macros=[
            MacroTextSpec("noopsort", discard=True),
            MacroTextSpec("url", "%(1)s"),
            MacroTextSpec("href", "%(2)s"),
            MacroTextSpec("-", ""),
            MacroTextSpec("/", ""),
            MacroTextSpec("!", ""),
            MacroTextSpec("relax", ""),
            MacroTextSpec("hyphen", "-"),  # biblatex's breakable hyphen
            # the escapes of LaTeX's specials print the ASCII character (pylatexenc: U+02C6 for ^)
            MacroTextSpec("textasciicircum", "^"),
            MacroTextSpec("textasciitilde", "~"),
            MacroTextSpec("textbackslash", "\\"),
            MacroTextSpec("textbraceleft", "{"),
            MacroTextSpec("textbraceright", "}"),
            # the logos, by name
            MacroTextSpec("TeX", "TeX"),
            MacroTextSpec("LaTeX", "LaTeX"),
            MacroTextSpec("LaTeXe", "LaTeX2e"),
            MacroTextSpec("BibTeX", "BibTeX"),
            MacroTextSpec("AmSTeX", "AmS-TeX"),
            # font switches ({\em word}, {\sc Name}) change the look, not the text
            *(MacroTextSpec(m, "") for m in _FONT_SWITCHES),
        ],
        prepend=True,
    )
    return _Converter(latex_context=text_db, math_mode="text"), walker_db


_FONT_SWITCHES = (
    "em", "it", "bf", "sc", "rm", "sf", "tt", "sl", "itshape", "bfseries", "scshape", "upshape",
    "slshape", "mdseries", "rmfamily", "sffamily", "ttfamily", "normalfont", "small", "large", "Large",
)  # fmt: skip


# ---- an abstract's macros ----

# Macros whose argument is the text itself (formatting only).
_TEXT_MACROS = (
    "textsc|textbf|textit|texttt|textrm|textsf|textmd|textup|textsl|emph|"
    "underline|mbox|text|mathrm|mathbf|mathit|mathsf|mathtt|operatorname|"
    "boldsymbol|bm|mathcal|mathscr|mathfrak|url|href|hbox|textnormal"
)
_TEXT_MACRO_RE = re.compile(r"\\(?:" + _TEXT_MACROS + r")\s*\{([^{}]*)\}")
_HREF_RE = re.compile(r"\\href\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
MATHBB_RE = re.compile(r"\\mathbb\s*\{\s*([A-Za-z])\s*\}")  # \mathbb{R}: blackboard bold
_BB = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "E": "𝔼", "P": "ℙ"}

# fmt: off
SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε",
    "varepsilon": "ε", "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ",
    "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ",
    "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "φ",
    "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ",
    "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π",
    "Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    "times": "×", "cdot": "·", "cdots": "⋯", "ldots": "…", "dots": "…",
    "leq": "≤", "le": "≤", "geq": "≥", "ge": "≥", "neq": "≠", "ne": "≠",
    "approx": "≈", "sim": "∼", "simeq": "≃", "equiv": "≡", "propto": "∝",
    "infty": "∞", "pm": "±", "mp": "∓", "to": "→", "rightarrow": "→",
    "leftarrow": "←", "Rightarrow": "⇒", "Leftarrow": "⇐", "mapsto": "↦",
    "leftrightarrow": "↔", "in": "∈", "notin": "∉", "subset": "⊂",
    "subseteq": "⊆", "cup": "∪", "cap": "∩", "forall": "∀", "exists": "∃",
    "partial": "∂", "nabla": "∇", "sum": "∑", "prod": "∏", "int": "∫",
    "sqrt": "√", "log": "log", "exp": "exp", "min": "min", "max": "max",
    "ell": "ℓ", "circ": "∘", "star": "⋆", "ast": "∗", "emptyset": "∅",
    "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉",
    "langle": "⟨", "rangle": "⟩", "top": "⊤", "dagger": "†", "%": "%",
    "&": "&", "_": "_", "#": "#", "$": "$", "{": "{", "}": "}", "textendash": "–",
    "textemdash": "—", "ss": "ß", "ae": "æ", "o": "ø", "O": "Ø", "aa": "å",
    "l": "ł", "L": "Ł", "i": "ı", "ie": "i.e.", "eg": "e.g.", "etal": "et al.",
    # old-style font switches ({\\it x}, {\\sc x}) carry no text
    "it": "", "em": "", "bf": "", "sc": "", "rm": "", "tt": "", "sl": "", "sf": "",
    "quad": " ", "qquad": " ", "left": "", "right": "", "big": "", "Big": "",
    # what the BibTeX exporter writes for characters LaTeX treats specially
    "textbraceleft": "{", "textbraceright": "}", "textless": "<", "textgreater": ">", "textbar": "|",
    "textbackslash": "\\",
    "textasciitilde": "~", "textasciicircum": "^", "textunderscore": "_", "textdegree": "°",
    "textbullet": "•", "texteuro": "€", "textcopyright": "©", "pounds": "£", "S": "§", "P": "¶",
    "guillemotleft": "«", "guillemotright": "»",
}
# fmt: on
_MACRO_RE = re.compile(r"\\([A-Za-z]+|[%&_#${}])")


def blackboard(expr: str) -> str:
    """Math's blackboard letters as Unicode (`\\mathbb{R}` → ℝ; one without a character: the letter)."""
    if "mathbb" not in expr:
        return expr
    return MATHBB_RE.sub(lambda m: _BB.get(m.group(1), m.group(1)), expr)


def latex_to_text(text: str) -> str:
    """An abstract's LaTeX text macros and symbols as Unicode; unknown macros keep their name."""
    if "\\" not in text and "~" not in text:
        return text
    text = _HREF_RE.sub(r"\2", text)
    for _ in range(4):  # nested \textbf{\emph{x}}
        new = _TEXT_MACRO_RE.sub(r"\1", text)
        if new == text:
            break
        text = new
    text = _ACCENT_RE.sub(lambda m: unicodedata.normalize("NFC", _accented(m)), text)
    text = _MACRO_RE.sub(lambda m: SYMBOLS.get(m.group(1), m.group(1)), text)
    return text.replace("~", "\u00a0")
