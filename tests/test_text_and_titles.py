"""Plain text, fingerprints and derived titles, on seed abstracts and on edge cases."""

from __future__ import annotations

import pytest

from papershelf.core.dedupe import fingerprint
from papershelf.core.importers import parse_file
from papershelf.core.render import find_links, plain_text
from papershelf.core.text import fold
from papershelf.core.titles import MAX_TITLE, derive_title


@pytest.mark.parametrize(
    "raw, shown",
    [
        (
            r"We introduce \textsc{VeriSimpl}, based on \emph{simplification}.",
            "We introduce VeriSimpl, based on simplification.",
        ),
        (r"a critical time gap $\Delta$ that", "a critical time gap Δ that"),
        (r"Exploit rates range from 0\% to 13.9\% \& more", "Exploit rates range from 0% to 13.9% & more"),
        ("a **Glocal** *unpaired* `code` [repo](https://x.org/a)", "a Glocal unpaired code repo"),
        (r"we are inspired by ``reverse thinking'' -- prompting", "we are inspired by “reverse thinking” – prompting"),
        (r"a fully {\it single-loop} manner, \ie with", "a fully single-loop manner, i.e. with"),
        (r"generalized Tur\'{a}n problems and F\"{o}ppl's model", "generalized Turán problems and Föppl's model"),
        ("SCHUR-A*, an algorithm that leverages A* search", "SCHUR-A*, an algorithm that leverages A* search"),
        (r"$\mathbb{E}[I(x)]$ over $\mathbb{R}^n$", "𝔼[I(x)] over ℝn"),
    ],
)
def test_plain_text(raw, shown):
    assert plain_text(raw) == shown


def test_fold_diacritics():
    assert fold("Mălan") == fold("Malan") == "malan"
    assert fold("Álvarez") == "alvarez"


def test_fingerprint_ignores_markup_case_and_whitespace():
    a = r"We introduce \textsc{VeriSimpl}, a  solver for $\Delta$-problems with **bold** claims."
    b = "we introduce VeriSimpl, a solver\nfor Δ-problems with bold claims"
    assert fingerprint(a) == fingerprint(b)
    assert fingerprint(a) != fingerprint("We introduce VeriSimpl, a solver for other problems.")


def test_find_links_strips_trailing_punctuation():
    raw = (
        "Code: https://github.com/LAMDA-RL/MAFIS. See [https://github.com/Muyiiiii/NeurIPS-25-Glocal-IB]"
        "(https://github.com/Muyiiiii/NeurIPS-25-Glocal-IB) and (https://a.org/x_(y))."
    )
    assert find_links(raw) == [
        "https://github.com/LAMDA-RL/MAFIS",
        "https://github.com/Muyiiiii/NeurIPS-25-Glocal-IB",
        "https://a.org/x_(y)",
    ]


@pytest.mark.parametrize(
    "abstract, title",
    [
        (
            r"Natural language interfaces help. However, it is hard. We introduce \textsc{VeriSimpl}, a "
            r"solver–LLM framework for robust natural-language-to-optimization formalization. It works.",
            "VeriSimpl: a solver–LLM framework for robust natural-language-to-optimization…",
        ),
        (
            "We introduce BayeSQP, a novel algorithm for general black-box optimization that merges the "
            "structure of sequential quadratic programming with concepts from Bayesian optimization.",
            "BayeSQP: a novel algorithm for general black-box optimization that merges the structure…",
        ),
        (
            "Hypergraphs are hard. To this end, we propose ZEN (Zero-Parameter Hypergraph Neural Network), "
            "a fully linear and parameter-free model.",
            "ZEN: Zero-Parameter Hypergraph Neural Network",
        ),
        (
            "Offline RL is hard. We introduce Quantile Reward Policy Optimization (QRPO), which learns from "
            "pointwise absolute rewards.",
            "QRPO: Quantile Reward Policy Optimization",
        ),
        (
            "Combinatorial optimization (CO) is naturally discrete, making machine learning based on "
            "differentiable relaxations difficult.",
            "Combinatorial optimization (CO) is naturally discrete",
        ),
        (
            "In this paper, we design Markov decision processes (MDPs) for different combinatorial problems.",
            "We design Markov decision processes (MDPs) for different combinatorial problems",
        ),
    ],
)
def test_derived_titles(abstract, title):
    assert derive_title(abstract) == title


def test_every_seed_gets_a_short_clean_title(seeds):
    titles = [derive_title(p.abstract) for path in seeds for p in parse_file(path).papers]
    assert len(titles) == 387
    for title in titles:
        assert 12 <= len(title) <= MAX_TITLE, title
        assert not any(ch in title for ch in "\\${}`"), title
        assert "**" not in title, title
        assert title[0].isupper() or not title[0].isalpha(), title
        assert not title.endswith((",", ";", ":", " ")), title


def test_derived_title_of_empty_abstract():
    assert derive_title("   ") == "Untitled paper"


def test_named_contribution_after_this_work():
    abstract = (
        "Graphs are everywhere. This work presents GraphZip, a compressor for large "
        "graphs that keeps neighbourhood queries fast."
    )
    assert derive_title(abstract) == "GraphZip: a compressor for large graphs that keeps neighbourhood queries fast"


@pytest.mark.parametrize(
    "a, b",
    [
        ("a bound of −5 on the loss", "a bound of -5 on the loss"),
        ("state-of-the-art multi\u00adagent methods", "state-of-the-art multiagent methods"),
        ("Deep nets generalise\u2028well", "Deep nets generalise well"),
        ("as shown in the figure。", "as shown in the figure"),
        ("it “works” — mostly…", 'it "works" -- mostly...'),
        (r"error $\leq 0.1$ at 30° in $\mathbb{R}^n$", "error ≤ 0.1 at 30 in ℝ^n"),
    ],
)
def test_fingerprints_agree_across_unicode_punctuation(a, b):
    assert fingerprint(a) == fingerprint(b)


@pytest.mark.parametrize("raw", ["x\u2009y", "x\u3000y", "x\u2028y", "x\x85y", "x\x0cy", "x\x1cy", " x\u00a0y "])
def test_plain_text_is_one_line_with_single_spaces(raw):
    assert plain_text(raw) == "x y"


def test_we_call_this_named_contribution():
    abstract = (
        "Graphs need attention. We call this architecture Graph Attention Networks (GATs), "
        "and show it works on many benchmarks."
    )
    assert derive_title(abstract) == "GATs: Graph Attention Networks"


def test_a_markdown_link_whose_url_holds_brackets_is_still_a_link():
    from papershelf.core.render import abstract_html

    assert plain_text("see [the code](http://x.org/a[1]) now") == "see the code now"
    assert '<a href="http://x.org/a[1]">the code</a>' in abstract_html("see [the code](http://x.org/a[1]) now")


def test_plain_text_of_an_abstract_is_computed_once_while_in_use(seeds):
    from papershelf.core import render as text

    abstracts = [p.abstract for path in seeds for p in parse_file(path).papers]
    text._cached_plain_text.cache_clear()
    first = [plain_text(a) for a in abstracts]
    assert first == [text._plain_text(a) for a in abstracts]  # the same text as computed
    before = text._cached_plain_text.cache_info()
    assert [plain_text(a) for a in abstracts] == first
    after = text._cached_plain_text.cache_info()
    cached = sum(len(a) in text.PLAIN_TEXT_CACHED_LENGTHS for a in abstracts)
    assert cached > 0.9 * len(abstracts)
    assert after.hits - before.hits == cached and after.misses == before.misses
    assert after.currsize <= text.PLAIN_TEXT_CACHE_SIZE
    # titles are cheaper to compute than to look up, and huge texts are no abstracts
    plain_text("A short title")
    plain_text("x" * 100_000)
    assert text._cached_plain_text.cache_info().misses == after.misses


def test_a_tool_the_contribution_uses_is_not_taken_for_its_name(seeds):
    """Sample abstracts whose opening names a field's term after "by means of … and",
    "for" or "with": the term (RL, LLM, COPs) is not the paper's contribution."""
    by_start = {}
    for path in seeds:
        for line in path.read_text(encoding="utf-8").splitlines():
            by_start[line[:40]] = line
    cp = next(v for k, v in by_start.items() if k.startswith("Constraint Programming (CP) is a declara"))
    assert not derive_title(cp).startswith("RL:")
    assert derive_title(cp).startswith("Constraint Programming (CP) is a declarative")
    # a name given right after the head noun still is the contribution
    assert derive_title("We introduce a new benchmark Reward Hacking Benchmark (RHB) of tasks.").startswith(
        "RHB: Reward Hacking Benchmark"
    )
    assert derive_title("We propose a method based on Graph Neural Networks (GNNs) for routing.") == (
        "We propose a method based on Graph Neural Networks (GNNs) for routing"
    )
