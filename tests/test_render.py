"""Abstracts as HTML for the viewer: formatting kept, everything escaped."""

from __future__ import annotations

from papershelf.core.render import abstract_html
from papershelf.core.search import PaperAnalyzer

normal = PaperAnalyzer()._normal


def test_latex_markdown_and_math_become_formatting():
    html = abstract_html(r"We present \textsc{VeriSimpl}, \textbf{fast} and \emph{exact}; **bold**, *it*, "
                         r"`code`, $\Delta x^2 + y_{i}$ over $\mathbb{R}^n$, 50\% \& more ``quoted''.")
    assert '<span style="font-variant:small-caps">VeriSimpl</span>' in html
    assert "<b>fast</b>" in html and "<i>exact</i>" in html and "<b>bold</b>" in html and "<i>it</i>" in html
    assert "<code>code</code>" in html
    assert "Δ x<sup>2</sup> + y<sub>i</sub>" in html and "ℝ<sup>n</sup>" in html
    assert "50% &amp; more “quoted”" in html


def test_snake_case_and_underscores_stay_text():
    html = abstract_html("the snake_case_name and a_b are identifiers, as is __init__ sometimes")
    assert "snake_case_name" in html and "a_b" in html and "<i>" not in html


def test_only_web_links_become_links():
    html = abstract_html("Code at https://github.com/x/y_z). See [docs](https://ex.org/d) and "
                         "[bad](javascript:alert(1)) and \\href{https://a.org}{here}.")
    assert '<a href="https://github.com/x/y_z">https://github.com/x/y_z</a>)' in html
    assert '<a href="https://ex.org/d">docs</a>' in html and '<a href="https://a.org">here</a>' in html
    assert "href=\"javascript" not in html


def test_hostile_markup_is_escaped_and_highlights_do_not_break_it():
    html = abstract_html("<script>alert(1)</script> <img src=x onerror=alert(1)> lt gt amp script",
                         {normal("script"), "lt", "amp"}, normal)
    assert "<script" not in html and "<img" not in html
    assert "&lt;<span class=\"match\">script</span>&gt;" in html
    assert '<span class="match">lt</span> gt <span class="match">amp</span>' in html
    assert "&<span" not in html


def test_query_words_are_marked_in_every_form():
    html = abstract_html("Diffusion models diffuse; a \\textbf{diffusing} process.", {normal("diffusion")}, normal)
    assert html.count('class="match"') == 3


def test_searching_for_a_number_marks_it_without_breaking_math_or_links():
    html = abstract_html("see $x$ and 0 and [docs](https://example.org)", {"0"}, str.lower)
    assert '<span class="match">0</span>' in html
    assert "\x00" not in html and '<a href="https://example.org">docs</a>' in html


def test_a_bare_link_right_before_a_markdown_link_keeps_both():
    html = abstract_html("http://u.org[t](http://v.org) end")
    assert html == '<a href="http://u.org">http://u.org</a><a href="http://v.org">t</a> end'
