"""Matching a found record to a paper: abstracts from the seeds, from the seed replay set and
from recorded real answers; phrases for arXiv's search; the score and its reasons."""

from __future__ import annotations

import itertools
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from papershelf.core.online.matching import (
    ABSTRACT_DIFFERENT,
    ABSTRACT_MATCH,
    AUTO_CONFIDENCE,
    PROPOSE_CONFIDENCE,
    STOP_WORDS,
    abstract_similarity,
    arxiv_query,
    distinctive_phrases,
    score,
    words,
)
from papershelf.core.online.records import FoundRecord
from papershelf.core.paper import Paper
from papershelf.core.render import plain_text

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "metadata"
RECORDED = FIXTURES / "recorded"
SEEDS = FIXTURES / "seeds"
ATOM = "{http://www.w3.org/2005/Atom}"


def inverted(index: dict[str, list[int]]) -> str:
    """OpenAlex's abstract_inverted_index back to text."""
    return " ".join(w for _, w in sorted((p, w) for w, ps in index.items() for p in ps))


def served_abstracts(name: str) -> list[tuple[str, str]]:
    """(identifier, abstract) of each record in one answer file of the seed replay set: the
    arXiv id or DOI, whose invented prefixes tell a decoy (2412., 10.5555/decoy) or an
    unrelated paper (2503., 10.5555/unrelated) from the true record (see SOURCES.md)."""
    path = SEEDS / name
    if path.suffix == ".xml":
        root = ET.parse(path).getroot()
        return [(e.findtext(ATOM + "id") or "", e.findtext(ATOM + "summary") or "") for e in root.iter(ATOM + "entry")]
    data = json.loads(path.read_text(encoding="utf-8"))
    if "results" in data:
        return [(r["doi"], inverted(r["abstract_inverted_index"])) for r in data["results"]]
    if "data" in data:
        return [(r["externalIds"].get("DOI", ""), r["abstract"]) for r in data["data"]]
    message = data["message"]
    items = message["items"] if "items" in message else [message]
    return [(i["DOI"], i["abstract"]) for i in items]


def is_true_record(ident: str) -> bool:
    return not re.search(r"/abs/(2412|2503)\.|10\.5555/(decoy|unrelated)", ident)


@pytest.fixture(scope="module")
def seed_abstracts() -> dict[str, str]:
    index = json.loads((SEEDS / "index.json").read_text(encoding="utf-8"))
    return {key: entry["abstract"] for key, entry in index.items()}


@pytest.fixture(scope="module")
def seed_papers(tmp_path_factory: pytest.TempPathFactory) -> list[Paper]:
    from conftest import SEEDS as LISTINGS
    from papershelf.core.library import Library

    lib = Library.open(tmp_path_factory.mktemp("lib"))
    lib.import_files(LISTINGS)
    papers = list(lib.papers())
    lib.close()
    return papers


# ---- abstract_similarity on real abstracts ---------------------------------------------------------


def test_openalex_inverted_index_and_crossref_jats_of_one_doi_match() -> None:
    crossref = json.loads((RECORDED / "crossref_works_doi_10.1073_pnas.1414271111.json").read_text())["message"][
        "abstract"
    ]
    openalex = inverted(
        json.loads((RECORDED / "openalex_work_doi_10.1073_pnas.1414271111.json").read_text())["abstract_inverted_index"]
    )
    assert "<jats:p>" in crossref and "<" not in openalex
    assert abstract_similarity(crossref, openalex) >= 0.95


def test_an_arxiv_v1_and_its_published_abstract_match_and_other_papers_do_not() -> None:
    # OpenAlex's list holds the Nature Machine Intelligence paper and its arXiv preprint
    # (ChemCrow): the preprint's abstract opens with two sentences the published one lacks
    results = json.loads((RECORDED / "openalex_works_filter_title_search_augmenting_llm_chemistry.json").read_text())[
        "results"
    ]
    published, preprint = (inverted(r["abstract_inverted_index"]) for r in results)
    crossref = json.loads((RECORDED / "crossref_works_query_title_augmenting_llm_chemistry_rows1.json").read_text())
    jats = crossref["message"]["items"][0]["abstract"]
    pnas = json.loads((RECORDED / "crossref_works_doi_10.1073_pnas.1414271111.json").read_text())["message"]["abstract"]
    assert abstract_similarity(published, jats) >= 0.95
    assert abstract_similarity(preprint, jats) >= ABSTRACT_MATCH
    assert abstract_similarity(pnas, jats) < ABSTRACT_DIFFERENT
    assert abstract_similarity(pnas, preprint) < ABSTRACT_DIFFERENT


def test_every_served_version_matches_its_seed_and_every_decoy_does_not(seed_abstracts: dict[str, str]) -> None:
    expected = json.loads((SEEDS / "expected.json").read_text(encoding="utf-8"))
    index = json.loads((SEEDS / "index.json").read_text(encoding="utf-8"))
    checked = {"true": 0, "decoy": 0, "partial": 0}
    for e in expected:
        ours = seed_abstracts[e["key"]]
        entry = index[e["key"]]
        for name in list(entry["files"].values()) + list(entry["dois"].values()):
            for ident, theirs in served_abstracts(name):
                sim = abstract_similarity(ours, theirs)
                title = ident
                if is_true_record(ident) and e["mode"] != "partial":
                    assert sim >= ABSTRACT_MATCH, (e["key"], title, sim)
                    checked["true"] += 1
                elif is_true_record(ident):
                    assert ABSTRACT_DIFFERENT <= sim < ABSTRACT_MATCH, (e["key"], sim)
                    checked["partial"] += 1
                else:
                    assert sim < ABSTRACT_DIFFERENT, (e["key"], title, sim)
                    checked["decoy"] += 1
    assert checked["true"] >= 30 and checked["decoy"] >= 8 and checked["partial"] >= 1


def test_different_seed_papers_never_match(seed_papers: list[Paper]) -> None:
    # every pair within an area (the same topic: the hardest non-matches) and a spread of the rest
    by_area: dict[str, list[str]] = {}
    for p in seed_papers:
        by_area.setdefault(p.area, []).append(p.abstract)
    pairs = [pair for group in by_area.values() for pair in itertools.combinations(group[:25], 2)]
    pairs += list(zip([p.abstract for p in seed_papers[::3]], [p.abstract for p in seed_papers[1::3]], strict=False))
    worst = max(abstract_similarity(a, b) for a, b in pairs)
    assert len(pairs) > 500
    assert worst < ABSTRACT_DIFFERENT


def test_markup_case_and_line_breaks_do_not_matter(seed_papers: list[Paper]) -> None:
    latex = next(p.abstract for p in seed_papers if "\\textsc{VeriSimpl}" in p.abstract)
    unicode = plain_text(latex)
    wrapped = re.sub(r"(.{60,70}) ", "\\1\n", unicode).upper()
    jats = "<jats:title>Abstract</jats:title><jats:p>" + unicode.replace("&", "&amp;") + "</jats:p>"
    for other in (unicode, wrapped, jats):
        assert abstract_similarity(latex, other) >= 0.95
    assert words("Abstract Solver–LLM \\emph{simplification-based} verification") == [
        "solver",
        "llm",
        "simplification",
        "based",
        "verification",
    ]


def test_an_added_or_reworded_sentence_costs_little(seed_papers: list[Paper]) -> None:
    text = " ".join(seed_papers[1].abstract.split())
    sentences = re.split(r"(?<=\.)\s+", text)
    added = text + " Code is available at https://github.com/example/curvature and in the supplement."
    reworded = " ".join(
        sentences[:1] + ["Surprisingly, earlier work never used the constraints symmetries impose."] + sentences[2:]
    )
    assert abstract_similarity(text, added) >= 0.9
    assert abstract_similarity(text, reworded) >= 0.8


def test_empty_and_tiny_texts() -> None:
    assert abstract_similarity("", "anything at all") == 0.0
    assert abstract_similarity("Deep learning.", "Deep learning.") < ABSTRACT_MATCH  # two words prove nothing


# ---- phrases for arXiv's search ---------------------------------------------------------------------


def test_phrases_are_distinctive_words_of_the_abstract_as_written(seed_papers: list[Paper]) -> None:
    for paper in seed_papers:
        phrases = distinctive_phrases(paper.abstract)
        assert phrases, paper.abstract[:80]
        flat = " ".join(paper.abstract.split())
        seen: set[str] = set()
        for phrase in phrases:
            ws = phrase.split()
            assert 1 <= len(ws) <= 4
            assert not any(c in phrase for c in '\\${}"')
            assert ws[0].casefold() not in STOP_WORDS and ws[-1].casefold() not in STOP_WORDS
            assert phrase in flat or phrase in plain_text(flat), (phrase, flat[:100])
            assert not seen & {w.casefold() for w in ws}  # no word twice
            seen |= {w.casefold() for w in ws}
            if len(ws) == 1:  # a lone word is a coined name
                assert any(c.isupper() or c.isdigit() for c in ws[0][1:])


def test_a_named_method_is_found_inside_latex_markup() -> None:
    abstract = (
        "Language models help. We introduce \\textsc{QuasarNet}, a sparse transformer for radio astronomy, "
        "and show that it beats the baselines."
    )
    assert "QuasarNet" in distinctive_phrases(abstract, 3)


def test_arxiv_query_joins_two_phrases() -> None:
    abstract = (
        "Many machine learning techniques rely on approximating a loss function's curvature. We exploit "
        "weight-space symmetries to construct structured Hessian approximations."
    )
    query = arxiv_query(abstract)
    assert re.fullmatch(r'abs:"[^"]+" AND abs:"[^"]+"', query), query
    assert arxiv_query("") == ""


# ---- score ------------------------------------------------------------------------------------------


def _rec(**values: object) -> FoundRecord:
    return FoundRecord(service="crossref", **values)  # type: ignore[arg-type]


def test_score_a_true_version_is_automatic_and_says_why(seed_papers: list[Paper]) -> None:
    paper = next(p for p in seed_papers if "VeriSimpl" in p.abstract)
    rec = _rec(title="VeriSimpl", abstract=plain_text(paper.abstract), authors=paper.authors, year=2026)
    conf, reasons = score(paper, rec)
    assert conf >= AUTO_CONFIDENCE
    assert any("abstract matches" in r for r in reasons) and any("authors agree" in r for r in reasons)


def test_score_other_authors_lower_a_matching_abstract_to_a_proposal(seed_papers: list[Paper]) -> None:
    paper = next(p for p in seed_papers if "VeriSimpl" in p.abstract)
    rec = _rec(title="VeriSimpl", abstract=paper.abstract, authors=["Quentin Arbogast", "Wilhelmina Sörensen"])
    conf, reasons = score(paper, rec)
    assert PROPOSE_CONFIDENCE <= conf < AUTO_CONFIDENCE
    assert "no author in common" in reasons


def test_score_a_decoy_with_our_title_and_another_abstract_is_rejected(seed_papers: list[Paper]) -> None:
    ours, theirs = seed_papers[0], seed_papers[40]
    paper = Paper("p1", title="Solver-Guided Verification of Optimization Models", abstract=ours.abstract)
    decoy = _rec(title="Solver-guided verification of optimization models", abstract=theirs.abstract, year=2025)
    conf, reasons = score(paper, decoy)
    assert conf < PROPOSE_CONFIDENCE
    assert any("rejected" in r for r in reasons)
    # the same decoy against our derived title: the abstract alone rejects it
    conf, _ = score(ours, decoy)
    assert conf < PROPOSE_CONFIDENCE


def test_score_without_an_abstract_needs_title_and_authors() -> None:
    paper = Paper("p1", title="Weight-Space Symmetries for Curvature", authors=["Artem Artemev", "Rui Xia"], year=2026)
    both = _rec(title="Weight-space symmetries for curvature", authors=["A. Artemev", "R. Xia"], year=2026)
    title_only = _rec(title="Weight-space symmetries for curvature", authors=["Someone Else"])
    conf, reasons = score(paper, both)
    assert PROPOSE_CONFIDENCE <= conf < AUTO_CONFIDENCE and "no abstract to compare" in reasons
    assert score(paper, title_only)[0] < PROPOSE_CONFIDENCE
    derived = Paper(
        "p2", title="Weight-space symmetries for curvature", title_derived=True, abstract="", authors=["Artem Artemev"]
    )
    assert score(derived, both)[0] < PROPOSE_CONFIDENCE  # a derived title agrees with nothing


def test_score_without_an_abstract_against_a_derived_title_reads_the_title_in_our_abstract(
    seed_papers: list[Paper],
) -> None:
    paper = next(p for p in seed_papers if "weight-space symmetries" in p.abstract and p.authors)
    told = "Curvature Constraints from Weight-Space Symmetries in Loss Landscapes"
    same = _rec(title=told, authors=paper.authors)
    conf, reasons = score(paper, same)
    assert PROPOSE_CONFIDENCE <= conf < AUTO_CONFIDENCE
    assert any("words are in our abstract" in r for r in reasons)
    assert score(paper, _rec(title=told, authors=["Someone Else"]))[0] < PROPOSE_CONFIDENCE
    untold = _rec(title="Quantum Error Correction with Surface Codes at Scale", authors=paper.authors)
    assert score(paper, untold)[0] < PROPOSE_CONFIDENCE


def test_score_a_distant_year_lowers_it(seed_papers: list[Paper]) -> None:
    paper = Paper("p1", abstract=seed_papers[5].abstract, year=2026, title="x", title_derived=True)
    near = score(paper, _rec(abstract=paper.abstract, year=2026))[0]
    far, reasons = score(paper, _rec(abstract=paper.abstract, year=2012))
    assert far < near and any("year differs" in r for r in reasons)


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (
            "Wir untersuchen neuronale Netze für die Bildklassifikation und zeigen, dass sie besser sind als "
            "frühere Verfahren.",
            "Wir untersuchen neuronale Netze für die Spracherkennung und zeigen, dass sie besser sind als "
            "frühere Verfahren.",
        ),
        (
            "Nous étudions les réseaux de neurones pour la classification des images et nous montrons "
            "qu'ils sont meilleurs que les méthodes antérieures.",
            "Nous étudions les réseaux de neurones pour la reconnaissance de la parole et nous montrons "
            "qu'ils sont meilleurs que les méthodes antérieures.",
        ),
    ],
    ids=["german", "french"],
)
def test_two_one_sentence_abstracts_in_any_language_are_never_sure(ours: str, theirs: str) -> None:
    # a sentence proves little, whatever its language: its function words are no evidence
    paper = Paper("p1", title=ours[:40], title_derived=True, abstract=ours)
    conf, reasons = score(paper, FoundRecord("arxiv", title="Other", abstract=theirs))
    assert conf < AUTO_CONFIDENCE and any("review it" in r for r in reasons)
    assert {"für", "fur", "les", "que", "und"} <= STOP_WORDS


def test_placeholder_abstracts_are_no_abstracts() -> None:
    paper = Paper("p1", title="Sorting Networks", abstract="No abstract available.")
    for placeholder in ("No abstract available.", "N/A", "[Abstract not available]", "Abstract"):
        conf, reasons = score(paper, FoundRecord("crossref", title="Totally Different", abstract=placeholder))
        assert conf < PROPOSE_CONFIDENCE and "no abstract to compare" in reasons
