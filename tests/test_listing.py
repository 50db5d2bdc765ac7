"""The listing importer on the seeds and on the ways pasted text goes wrong."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from papershelf.core.errors import ListingError
from papershelf.core.importers import parse_file, parse_text
from papershelf.core.importers.listing import parse_area, split_authors

ABSTRACT = (
    "We study a problem that matters a great deal to many people in the field, and we "
    "show with careful experiments that our method improves on strong baselines."
)
ABSTRACT2 = (
    "Large models are expensive to serve, so we propose a cheaper way to run them on "
    "small devices and measure the savings on three public benchmarks in detail."
)


def by_author(parsed, name):
    return [p for p in parsed.papers if name in p.authors]


def test_seed_paper_search_listing_areas_and_authors(seeds):
    parsed = parse_file(seeds[0])
    assert parsed.format == "paper-search"
    assert len(parsed.papers) == 20
    assert parsed.problems == []
    first = parsed.papers[0]
    assert (first.area, first.subarea) == ("Theory", "Optimization")
    assert first.authors == ["Sumaya Abdul Rahman", "Seckhen Cuellar", "Ghani Raissov", "Mohammad Raza"]
    assert first.abstract.startswith("Natural language interfaces")
    # one author, no comma
    [thaman] = by_author(parsed, "Kunvar Thaman")
    assert thaman.authors == ["Kunvar Thaman"]
    assert (thaman.area, thaman.subarea) == ("General Machine Learning", "Evaluation")
    assert by_author(parsed, "Long HC Pham")[0].authors == ["Long HC Pham"]
    # a paper with authors and no area line
    [wang] = by_author(parsed, "Xinyou Wang")
    assert wang.area == "" and len(wang.authors) == 6
    # a subarea with commas stays whole
    [valero] = by_author(parsed, "Enrique Valero-Leal")
    assert valero.subarea == "Accountability, Transparency, and Interpretability"
    # a long author line (nine names) is still an author line, not an abstract
    [liu] = by_author(parsed, "Anjie Liu")
    assert (liu.subarea, len(liu.authors)) == ("Foundation Models", 9)


def test_seed_area_with_commas_and_area_alone(seeds):
    parsed = parse_file(seeds[1])
    neuro = [p for p in parsed.papers if p.subarea == "Neuroscience, Cognitive Science"]
    assert len(neuro) == 2 and all(p.area == "Applications" for p in neuro)
    assert neuro[0].authors[0] == "Victor Geadah"
    alone = [p for p in parsed.papers if p.area == "Probabilistic Methods" and not p.subarea]
    assert alone[0].authors[0] == "Yaozhong Shi"


def test_seed_daily_papers_are_abstracts_only(seeds):
    parsed = parse_file(seeds[2])
    assert parsed.format == "daily-papers"
    assert len(parsed.papers) == 120
    assert all(not p.authors and not p.area for p in parsed.papers)
    assert parsed.problems == []


def test_line_numbers_point_at_the_paper(seeds):
    parsed = parse_file(seeds[0])
    lines = seeds[0].read_text(encoding="utf-8").split("\n")
    for paper in parsed.papers:
        first = lines[paper.line - 1]
        assert first.startswith(paper.area or (paper.authors[0] if paper.authors else paper.abstract[:20]))


def listing(*blocks: str, header: str = "论文检索") -> str:
    return "\n\n".join(([header] if header else []) + list(blocks)) + "\n"


def test_bom_crlf_trailing_spaces_blank_runs():
    text = listing("Theory · Game Theory   ", "Ada Lovelace, Alan Turing  ", ABSTRACT, "\n\n\n", ABSTRACT2)
    raw = codecs.BOM_UTF8 + text.replace("\n", "\r\n").encode("utf-8")
    parsed = parse_text(raw.decode("utf-8-sig").replace("\r\n", "\n"), "x.txt")
    assert [p.authors for p in parsed.papers] == [["Ada Lovelace", "Alan Turing"], []]
    assert parsed.papers[0].subarea == "Game Theory"
    assert parsed.problems == []


def test_bom_and_crlf_from_a_real_file(tmp_path):
    path = tmp_path / "l.txt"
    text = listing("Theory · Game Theory", "Ada Lovelace", ABSTRACT)
    path.write_bytes(codecs.BOM_UTF8 + text.replace("\n", "\r\n").encode("utf-8"))
    parsed = parse_file(path)
    assert parsed.format == "paper-search"
    assert parsed.papers[0].authors == ["Ada Lovelace"]
    assert "\r" not in parsed.papers[0].abstract


def test_missing_header_is_sniffed():
    parsed = parse_text(
        listing("Optimization · Everything Else", "Ada Lovelace, Alan Turing", ABSTRACT, header=""), "x.txt"
    )
    assert parsed.format == "paper-search"
    assert parsed.papers[0].area == "Optimization"
    daily = parse_text(listing(ABSTRACT, ABSTRACT2, header=""), "y.txt")
    assert daily.format == "daily-papers" and len(daily.papers) == 2


def test_fields_pasted_without_blank_lines():
    text = "论文检索\nTheory · Optimization\nAda Lovelace, Alan Turing\n" + ABSTRACT + "\n"
    [paper] = parse_text(text, "x.txt").papers
    assert paper.area == "Theory" and paper.authors == ["Ada Lovelace", "Alan Turing"]
    assert paper.abstract == ABSTRACT


def test_wrapped_abstract_lines_join():
    half = len(ABSTRACT) // 2
    cut = ABSTRACT.rfind(" ", 0, half)
    text = listing("Ada Lovelace", ABSTRACT[:cut] + "\n" + ABSTRACT[cut + 1 :])
    [paper] = parse_text(text, "x.txt").papers
    assert paper.abstract == ABSTRACT


def test_odd_lines_reported_with_line_numbers_not_dropped_silently():
    text = listing("Theory · Optimization", "Ada Lovelace", ABSTRACT, "Load more", ABSTRACT2)
    parsed = parse_text(text, "odd.txt")
    assert len(parsed.papers) == 2
    [problem] = parsed.problems
    assert problem.line == 9 and "Load more" in problem.message
    assert str(problem).startswith("odd.txt:9:")


def test_area_line_without_abstract_is_reported():
    text = listing("Theory · Optimization", "Deep Learning · Robustness", "Ada Lovelace", ABSTRACT)
    parsed = parse_text(text, "x.txt")
    assert parsed.papers[0].area == "Deep Learning"
    assert any(p.line == 3 and "area line" in p.message for p in parsed.problems)


def test_listing_cut_off_mid_paper_is_reported():
    text = listing("Theory · Optimization", "Ada Lovelace", ABSTRACT, "Deep Learning · Robustness", "Alan Turing")
    parsed = parse_text(text, "cut.txt")
    assert len(parsed.papers) == 1
    assert [p.line for p in parsed.problems] == [9, 11]
    assert all("cut off" in p.message for p in parsed.problems)


def test_abstract_cut_mid_sentence_is_imported_with_a_note():
    text = listing("Ada Lovelace", ABSTRACT + " Moreover, we find that the")
    parsed = parse_text(text, "cut.txt")
    assert len(parsed.papers) == 1
    assert "mid-sentence" in parsed.problems[0].message


def test_unfamiliar_area_is_kept_and_reported():
    parsed = parse_text(listing("Quantum Computing · Error Correction", "Ada Lovelace", ABSTRACT), "x.txt")
    assert parsed.papers[0].area == "Quantum Computing"
    assert "unfamiliar area" in parsed.problems[0].message


@pytest.mark.parametrize(
    "line, expected",
    [
        ("Applications · Neuroscience, Cognitive Science", ("Applications", "Neuroscience, Cognitive Science", True)),
        ("Optimization", ("Optimization", "", True)),
        ("Reinforcement Learning · Multi-agent", ("Reinforcement Learning", "Multi-agent", True)),
        ("Kunvar Thaman", None),
        ("Theory, Practice", None),
    ],
)
def test_parse_area(line, expected):
    assert parse_area(line) == expected


@pytest.mark.parametrize(
    "line, expected",
    [
        ("Kunvar Thaman", ["Kunvar Thaman"]),
        ("Long HC Pham", ["Long HC Pham"]),
        ("Guy Van den Broeck, Zhe Zeng", ["Guy Van den Broeck", "Zhe Zeng"]),
        ("Abele Mălan, Mauricio Álvarez, Nathanaël Haas", ["Abele Mălan", "Mauricio Álvarez", "Nathanaël Haas"]),
        ("Benjamin M. Boyd, Philip S Yu", ["Benjamin M. Boyd", "Philip S Yu"]),
        ("Optimization", None),
        ("We propose a method.", None),
        ("Load more", None),
        ("Code is at https://github.com/x/y", None),
    ],
)
def test_split_authors(line, expected):
    assert split_authors(line) == expected


# ---- fuzzing: the only exception the importer may raise is its own -----------

_pieces = st.sampled_from(
    [
        "论文检索",
        "Daily Papers",
        "Theory · Optimization",
        "Applications · Neuroscience, Cognitive Science",
        "Kunvar Thaman",
        "Ada Lovelace, Alan Turing",
        ABSTRACT,
        ABSTRACT2,
        "",
        "\n",
        "·",
        "$\\Delta$",
        "\\textsc{",
        "}",
        "**",
        "[x](http://",
        "%",
        "&",
        "_",
        "\ufeff",
        "\r\n",
        "\t",
        " ",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_pieces, st.text(max_size=80)), max_size=40).map("\n".join))
def test_fuzz_parse_text_never_crashes(text):
    try:
        parsed = parse_text(text, "fuzz.txt")
    except ListingError:
        return
    for paper in parsed.papers:
        assert paper.abstract.strip()
        assert paper.line >= 1
    for problem in parsed.problems:
        assert problem.line >= 0 and problem.message


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=4000))
def test_fuzz_parse_file_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "f.txt"
    path.write_bytes(data)
    try:
        parse_file(path)
    except ListingError as exc:
        assert str(path) in str(exc)
