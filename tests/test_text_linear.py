"""Text processing takes time linear in its input, whatever the input.

Abstracts are pasted from anywhere, and a hostile one (40,000 "[" then
40,000 "](", or "x^" sixteen thousand times in math) once took seconds to
minutes to import, render or export. Every text function on a user's path
is timed here on such input of 200 KB–1 MB against an ordinary abstract of
the same length (prose with the usual LaTeX, math, Markdown and links), and
must stay within RATIO times that plus SLACK. Linear work on dense markup
costs a few times more than on prose; quadratic work costs hundreds of times
more at these sizes, so the margin is wide and a slow, busy machine passes.

A case that runs past its budget is stopped by SIGALRM (Python's regular
expression engine checks for signals), so a regression fails in seconds
instead of running for hours (one cubic pattern needed 11 s for 800 letters).
"""

from __future__ import annotations

import itertools
import signal
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from papershelf.core.dedupe import fingerprint
from papershelf.core.exporters.bibtex import render
from papershelf.core.library import Library
from papershelf.core.limits import MAX_FIELD_CHARS, MAX_TITLE_CHARS
from papershelf.core.paper import Paper
from papershelf.core.render import abstract_html, find_links, plain_text
from papershelf.core.search import PaperAnalyzer, make_snippet
from papershelf.core.text import clean_text
from papershelf.core.titles import derive_title

pytestmark = pytest.mark.slow  # half a minute in all, 510 cases

RATIO = 25
SLACK = 0.05  # seconds: timer resolution, a page fault, a garbage collection
IMPORT_SLACK = 0.25  # imports also write and fsync the library
SIZE = 200_000

ORDINARY = (
    "We introduce \\textsc{VeriSimpl}, a solver--LLM framework that simplifies $\\mathcal{O}(n^2)$ "
    "constraints with $x_i^{2} \\leq \\alpha$ in **two** passes and *one* check. Code is at "
    "[our site](https://example.org/verisimpl) and https://github.com/x/y (MIT). It beats {BayeSQP} "
    "by 5\\% on `MIPLIB` \\& more (see Fig. 3), e.g. for Schr\\\"odinger's ``cat'' -- or a dog. "
)


def fill(unit: str, n: int = SIZE) -> str:
    return (unit * (n // len(unit) + 1))[:n]


def ordinary(n: int = SIZE) -> str:
    """Ordinary abstracts, whole ones (braces balanced), then plain words, n characters in all."""
    k = n // len(ORDINARY)
    return ORDINARY * k + fill("words ", n - k * len(ORDINARY))


def halves(a: str, b: str, n: int = SIZE) -> str:
    k = n // (len(a) + len(b))
    return a * k + b * k


def hostile_texts(n: int) -> dict[str, str]:
    """name -> a hostile text of about n characters"""
    return {
        # from the issue
        "brackets then link openers": halves("[", "](", n),
        "math of superscripts": "$" + fill("x^", n - 3) + "x$",
        "unclosed math of superscripts": "$" + fill("x^", n - 1),
        # found auditing the patterns
        "link openers without an end": fill("[a](http://", n),
        "image openers": fill("![", n),
        "bold openers": fill("**a ", n),
        "underscore bold openers": fill("__a ", n),
        "italic openers": fill("*a ", n),
        "underscore italic openers": fill("_a ", n),
        "url then closing parens": "http://x.org/" + fill(")", n - 13),
        "url of paren pairs then closers": "http://x.org/" + fill("()", n // 2) + fill(")", n // 2),
        "math subscripts of macros": "$" + fill("_\\a", n - 2) + "$",
        "math sub and superscripts": "$" + fill("x_1^2", n - 2) + "$",
        "capitals then underscore": "A" * (n - 1) + "_",
        "capitals then escaped brace": "A" * (n - 2) + "\\}",
        "camel case then underscore": fill("aB", n - 1) + "_",
        "hyphenated capitals then underscore": "AB" + fill("-AB", n - 3) + "_",
        "urls run together": fill("http://", n),
        # the ones the brief lists, and relatives
        "backslashes": fill("\\", n),
        "open braces": fill("{", n),
        "close braces": fill("}", n),
        "dollars": fill("$", n),
        "dollar letter": fill("$a", n),
        "dollar newline": fill("$\n", n),
        "display math openers": fill("$$a$ ", n),
        "escaped dollars": "$" + fill("\\$", n - 1),
        "stars": fill("*", n),
        "underscores": fill("_", n),
        "backticks": fill("`", n),
        "backtick words": fill("`a ", n),
        "tex quotes": fill("`a'", n),
        "dashes": fill("-", n),
        "tildes": fill("~", n),
        "fractions": "$" + fill("\\frac{", n - 2) + "$",
        "unclosed fractions": "$" + fill("\\frac{", n - 1),
        "superscript groups": "$" + fill("^{", n - 2) + "$",
        "blackboard openers": "$" + fill("\\mathbb{", n - 2) + "$",
        "nested macros": "\\textbf{" * (n // 16) + "x" + "}" * (n // 16),
        "nested emphasis": fill("\\emph{", n // 2) + fill("}", n // 2),
        "nested braces": "{" * (n // 2) + "}" * (n // 2),
        "href openers": fill("\\href{", n),
        "accent commands": fill("\\'", n),
        "long word": "a" * n,
        "ampersands and percents": fill("&%", n),
        "angle brackets": fill("<>", n),
        "sentence ends": fill(". ", n),
        "abbreviations": fill("e.g. A", n),
        "initials": fill("A. ", n),
        "contribution leads": fill("We propose A (", n),
        "accented letters and symbols": fill("é∑α ", n),
        "combining marks": "e" + "\u0301" * (n - 1),
        "CJK": fill("論文", n),
        "emoji": fill("😀", n),
    }


HOSTILE = hostile_texts(SIZE)
# what one field of a record may hold (core/limits.py): imports are timed at that size
FIELD_CHARS = MAX_FIELD_CHARS - 1_000
FIELD_HOSTILE = hostile_texts(FIELD_CHARS)

_analyzer = PaperAnalyzer()
NORMAL = _analyzer._normal
TERMS = {NORMAL(w) for w in ("constraints", "a", "x", "http", "solver")}


def _export(dialect: str):
    def run(text: str) -> str:
        paper = Paper("p1", title=text, abstract=text, authors=["Ada Lovelace"], year=2024)
        return render([paper], {"p1": "lovelace2024"}, dialect)[0]

    return run


# public text functions on a user's paths: import, titles, search, viewer, export
FUNCTIONS = {
    "plain_text": plain_text,
    "clean_text": clean_text,
    "find_links": find_links,
    "derive_title": derive_title,
    "fingerprint": fingerprint,
    "abstract_html": lambda text: abstract_html(text, TERMS, NORMAL),
    "search snippet": lambda text: make_snippet(plain_text(text), {t: n for n, t in enumerate(TERMS)}, NORMAL),
    "bibtex export": _export("bibtex"),
    "biblatex export": _export("biblatex"),
}


class _Overrun(Exception):
    pass


@contextmanager
def _deadline(seconds: float):
    if not hasattr(signal, "setitimer"):  # no SIGALRM (Windows): time it to the end
        yield
        return

    def expire(signum, frame):
        raise _Overrun

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _seconds(fn, arg, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn(arg)
        best = min(best, time.perf_counter() - start)
    return best


def _within(fn, arg, budget: float) -> bool:
    start = time.perf_counter()
    try:
        with _deadline(budget):
            fn(arg)
    except _Overrun:
        return False
    return time.perf_counter() - start <= budget


_usual_seconds: dict[tuple, float] = {}


def assert_linear(what: str, fn, hostile, usual_input, slack: float = SLACK) -> None:
    """fn(hostile) takes at most RATIO x fn(usual_input) + slack.

    The ordinary input's time is the best of a few runs, measured once per
    function and again before each retry (other work on the machine may
    have slowed both); the hostile input gets three tries.
    """
    key = (what, usual_input)
    for attempt in range(3):
        if attempt or key not in _usual_seconds:
            _usual_seconds[key] = _seconds(fn, usual_input, runs=3)
        budget = RATIO * _usual_seconds[key] + slack
        if _within(fn, hostile, budget):
            return
    pytest.fail(
        f"{what} took more than {budget:.2f} s (stopped there), against "
        f"{_usual_seconds[key] * 1000:.1f} ms for an ordinary abstract of the same length: superlinear"
    )


@pytest.mark.parametrize("name", HOSTILE)
@pytest.mark.parametrize("function", FUNCTIONS)
def test_text_function_is_linear_on_hostile_abstract(function, name):
    text = HOSTILE[name]
    assert_linear(function, FUNCTIONS[function], text, ordinary(len(text)))


# ---- the same through the importers, as a user imports a file ------------------


def _import_into_fresh_library(folder: Path):
    runs = itertools.count()

    def run(path: Path) -> None:
        lib = Library.open(folder / f"lib{next(runs)}")
        try:
            reports = lib.import_files([path])
            assert not reports[0].error
        finally:
            lib.close()

    return run


# what a .bib field can hold (balanced braces) and a listing paragraph (one line)
IMPORTED = [
    "brackets then link openers",
    "math of superscripts",
    "link openers without an end",
    "bold openers",
    "italic openers",
    "url then closing parens",
    "math subscripts of macros",
    "capitals then underscore",
    "urls run together",
    "dollars",
    "backtick words",
    "ampersands and percents",
    "contribution leads",
    "long word",
    "CJK",
]


def _bib(abstract: str) -> str:
    return "@article{key2024,\n  author = {Ada Lovelace},\n  year = {2024},\n  abstract = {" + abstract + "}\n}\n"


@pytest.mark.parametrize("name", IMPORTED)
def test_bib_import_is_linear_on_hostile_abstract(tmp_path, name):
    hostile, usual = tmp_path / "hostile.bib", tmp_path / "ordinary.bib"
    hostile.write_text(_bib(FIELD_HOSTILE[name]), encoding="utf-8")
    usual.write_text(_bib(ordinary(len(FIELD_HOSTILE[name]))), encoding="utf-8")
    assert_linear(f"importing {name}", _import_into_fresh_library(tmp_path), hostile, usual, IMPORT_SLACK)


LISTING_CHARS = FIELD_CHARS  # a listing paragraph above 100,000 characters is no abstract


def _listing(paragraph: str) -> str:
    opening = "In this paper we study what happens when an abstract holds nothing but markup, as here: "
    return "Daily Papers\n\n" + opening + paragraph.replace("\n", " ")[:LISTING_CHARS] + " end\n"


@pytest.mark.parametrize("name", IMPORTED)
def test_listing_import_is_linear_on_hostile_abstract(tmp_path, name):
    hostile, usual = tmp_path / "hostile.txt", tmp_path / "ordinary.txt"
    hostile.write_text(_listing(HOSTILE[name]), encoding="utf-8")
    usual.write_text(_listing(ordinary()), encoding="utf-8")
    assert_linear(f"importing a listing of {name}", _import_into_fresh_library(tmp_path), hostile, usual, IMPORT_SLACK)


def test_listing_cut_off_check_is_linear_on_a_run_of_urls(tmp_path):
    # the check that a listing's last abstract ends a sentence looked for a URL at its end
    # from every "http" of an unbroken run: quadratic
    hostile, usual = tmp_path / "hostile.txt", tmp_path / "ordinary.txt"
    hostile.write_text(_listing(fill("http://", LISTING_CHARS - 100)), encoding="utf-8")
    usual.write_text(_listing(ordinary(LISTING_CHARS - 100)), encoding="utf-8")
    run = _import_into_fresh_library(tmp_path)
    assert_linear("importing a listing ending in a run of URLs", run, hostile, usual, IMPORT_SLACK)
    lib = Library.open(tmp_path / "check")
    [report] = lib.import_files([hostile])
    assert report.added == 1 and any("mid-sentence" in p.message for p in report.problems)
    lib.close()


def test_ris_import_is_linear_in_wrapped_lines(tmp_path):
    # an abstract as long as a field may be, wrapped over 33,000 short lines, against the
    # same text on one line
    words = fill("ab ", FIELD_CHARS).split()
    hostile, usual = tmp_path / "wrapped.ris", tmp_path / "one-line.ris"
    hostile.write_text("TY  - JOUR\nTI  - A title\nAB  - " + "\n".join(words) + "\nER  - \n", encoding="utf-8")
    usual.write_text("TY  - JOUR\nTI  - A title\nAB  - " + " ".join(words) + "\nER  - \n", encoding="utf-8")
    assert_linear(
        "importing a wrapped RIS abstract", _import_into_fresh_library(tmp_path), hostile, usual, IMPORT_SLACK
    )
    lib = Library.open(tmp_path / "check")
    lib.import_files([hostile])
    [paper] = lib.papers()
    assert paper.abstract == " ".join(words)
    lib.close()


def test_title_of_capitals_exports_in_linear_time(tmp_path):
    # case protection matched a run of capitals before "_" in cubic time: 11 s for 800 letters
    # (a title as long as a title may be: cubic would take hours)
    capitals = MAX_TITLE_CHARS - 10  # with "\\_x" and the braces a field is kept in: within the limit
    hostile = "A" * capitals + "_x"
    usual = " ".join(ordinary(len(hostile)).split())
    bib = tmp_path / "titles.bib"
    bib.write_text(
        "".join(
            f"@article{{{key},\n  title = {{{title}}},\n  author = {{Ada Lovelace}},\n  year = {{2024}}\n}}\n"
            for key, title in (("caps", hostile.replace("_", "\\_")), ("usual", usual))
        ),
        encoding="utf-8",
    )
    lib = Library.open(tmp_path / "lib")
    try:
        lib.import_files([bib])
        ids = {p.title[:3]: p.id for p in lib.papers()}
        assert set(ids) == {"AAA", ORDINARY[:3]}

        def export(paper_id: str) -> str:
            return lib.export_bibtex([paper_id], "-")[1]

        assert_linear("exporting a title of capitals", export, ids["AAA"], ids[ORDINARY[:3]])
        assert "{" + "A" * capitals + "\\_x}" in export(ids["AAA"])
    finally:
        lib.close()


def test_what_the_linear_patterns_read():
    # a link's text holds no "[" and bold no "**": the innermost one is the markup, as in CommonMark
    assert plain_text("[a [b](https://x.org/b)") == "[a b"
    assert plain_text("**a **b** c") == "**a b c"
    assert find_links("at http://x.org/a(b)" + ")" * 1000 + ".") == ["http://x.org/a(b)"]
    html = abstract_html("at http://x.org/a(b)))). $x^2 + y^2_i$ [[[[c](https://x.org/c) **a **b**")
    assert html == (
        'at <a href="http://x.org/a(b)">http://x.org/a(b)</a>))). <span class="math">x<sup>2</sup> + '
        'y<sup>2</sup><sub>i</sub></span> [[[<a href="https://x.org/c">c</a> **a <b>b</b>'
    )
