"""Identifiers as people paste them: DOIs and arXiv ids in their many real-world spellings, read into
one normal form; anything else is not an identifier (None), never an error."""

from __future__ import annotations

import pytest

from papershelf.core.biblio.identifiers import (
    Identifier,
    find_identifiers,
    identifier_problem,
    only_identifiers,
    parse_identifier,
)


def doi(value: str) -> Identifier:
    return Identifier("doi", value)


def arxiv(value: str) -> Identifier:
    return Identifier("arxiv", value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # DOIs: bare, prefixed, resolver URLs, upper case, prose punctuation, URL-encoded
        ("10.1073/pnas.1414271111", doi("10.1073/pnas.1414271111")),
        ("10.1073/PNAS.1414271111", doi("10.1073/pnas.1414271111")),
        ("doi:10.1371/journal.pone.0033693", doi("10.1371/journal.pone.0033693")),
        ("DOI: 10.1371/journal.pone.0033693", doi("10.1371/journal.pone.0033693")),
        ("https://doi.org/10.1073/pnas.1414271111", doi("10.1073/pnas.1414271111")),
        ("http://dx.doi.org/10.1126/science.169.3946.635", doi("10.1126/science.169.3946.635")),
        ("  https://doi.org/10.1038/s42256-024-00832-8.  ", doi("10.1038/s42256-024-00832-8")),
        ("(doi:10.1023/A:1007154515475)", doi("10.1023/a:1007154515475")),
        ("<https://doi.org/10.1021/acs.jctc.5b00178>", doi("10.1021/acs.jctc.5b00178")),
        ("10.1046/j.1365-2699.2003.00795.x,", doi("10.1046/j.1365-2699.2003.00795.x")),
        ("https://doi.org/10.1046%2Fj.1365-2699.2003.00795.x", doi("10.1046/j.1365-2699.2003.00795.x")),
        # an old SICI DOI keeps its own brackets and semicolon
        (
            "https://doi.org/10.1002/(SICI)1097-4636(199602)30:2<239::AID-JBM13>3.0.CO;2-S",
            doi("10.1002/(sici)1097-4636(199602)30:2<239::aid-jbm13>3.0.co;2-s"),
        ),
        # a publisher's page names the DOI in its path
        (
            "https://onlinelibrary.wiley.com/doi/abs/10.1046/j.1365-2699.2003.00795.x",
            doi("10.1046/j.1365-2699.2003.00795.x"),
        ),
        ("https://link.springer.com/article/10.1023/A:1007154515475", doi("10.1023/a:1007154515475")),
        # arXiv, new style, with and without version and prefix
        ("2401.01234", arxiv("2401.01234")),
        ("arXiv:2401.01234v2", arxiv("2401.01234")),
        ("arxiv: 1605.08386", arxiv("1605.08386")),
        ("1605.08386v1", arxiv("1605.08386")),
        ("0704.0001", arxiv("0704.0001")),
        ("arXiv:1605.08386v2 [stat.ML]", arxiv("1605.08386")),
        ("https://arxiv.org/abs/2104.12255v1", arxiv("2104.12255")),
        ("http://export.arxiv.org/abs/1707.08567", arxiv("1707.08567")),
        ("arxiv.org/pdf/1707.08567.pdf", arxiv("1707.08567")),
        ("https://arxiv.org/pdf/2401.01234v3", arxiv("2401.01234")),
        ("https://www.arxiv.org/abs/2401.01234/", arxiv("2401.01234")),
        # arXiv's own DOIs (DataCite) are arXiv ids
        ("10.48550/arXiv.2304.05376", arxiv("2304.05376")),
        ("https://doi.org/10.48550/ARXIV.2304.05376", arxiv("2304.05376")),
        # old style: archive/YYMMNNN, a subject class is arXiv's legacy spelling
        ("hep-th/9901001", arxiv("hep-th/9901001")),
        ("astro-ph/0601001v2", arxiv("astro-ph/0601001")),
        ("math.GT/0309136", arxiv("math/0309136")),
        ("arXiv:cond-mat/0211034", arxiv("cond-mat/0211034")),
        ("https://arxiv.org/abs/hep-th/9901001v3", arxiv("hep-th/9901001")),
    ],
)
def test_real_world_forms(text: str, expected: Identifier) -> None:
    assert parse_identifier(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "hello world",
        "10.1234",  # a prefix without a suffix
        "10.12/abc",  # registrant codes have four digits at least
        "10.1234/",
        "0000.0000",  # no month 00
        "1313.12345",  # no month 13
        "2401.1234",  # from 2015 on, five digits after the point
        "1401.12345",  # before 2015, four
        "abc/9901001",  # not an arXiv archive
        "hep-th/2501001",  # old-style ids ended in 2007
        "https://example.com/paper",
        "arXiv:",
        "doi:",
        "x" * 5000,
    ],
)
def test_garbage_is_not_an_identifier(text: str) -> None:
    assert parse_identifier(text) is None


def test_text_form() -> None:
    assert str(parse_identifier("https://doi.org/10.1073/PNAS.1414271111")) == "doi:10.1073/pnas.1414271111"
    assert str(parse_identifier("2401.01234v2")) == "arXiv:2401.01234"
    assert str(parse_identifier("math.GT/0309136")) == "arXiv:math/0309136"


def test_found_in_a_pasted_block() -> None:
    block = """
    [1] E. A. Makris et al., PNAS 111 (2014), https://doi.org/10.1073/pnas.1414271111.
    [2] Gould et al. 2006, arXiv:astro-ph/0601001v1 [astro-ph].
    [3] ChemCrow, 10.48550/arXiv.2304.05376; published as doi:10.1038/s42256-024-00832-8
    @article{x, doi = {10.1371/journal.pone.0033693}, pages = {1234.5678}}
    (see also https://arxiv.org/abs/1605.08386v2, and again 10.1073/PNAS.1414271111)
    """
    assert find_identifiers(block) == [
        doi("10.1073/pnas.1414271111"),
        arxiv("astro-ph/0601001"),
        arxiv("2304.05376"),
        doi("10.1038/s42256-024-00832-8"),
        doi("10.1371/journal.pone.0033693"),
        arxiv("1605.08386"),
    ]


def test_nothing_found_in_plain_prose() -> None:
    assert find_identifiers("Nothing here: 3.14159, version 2.0, page 12/34, 2024.") == []


SICI = "10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-0"
SICI_VALUE = "10.1002/(sici)1097-4571(199806)49:8<693::aid-asi4>3.0.co;2-0"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # old SICI DOIs carry <, >, : and ; of their own
        (SICI, doi(SICI_VALUE)),
        (f"https://doi.org/{SICI}", doi(SICI_VALUE)),
        (f"doi:{SICI}.", doi(SICI_VALUE)),
        # a resolver link's anchor or query is the page's, not the DOI's
        ("https://doi.org/10.1073/pnas.1414271111#abstract", doi("10.1073/pnas.1414271111")),
        ("https://doi.org/10.1073/pnas.1414271111?download=true", doi("10.1073/pnas.1414271111")),
        ("http://dx.doi.org/10.1073/pnas.1414271111?ref=x#y", doi("10.1073/pnas.1414271111")),
        # arXiv's own listing links
        ("https://www.arxiv.org/abs/2401.01234?context=cs", arxiv("2401.01234")),
        ("https://arxiv.org/abs/2401.01234v2#", arxiv("2401.01234")),
        ("https://arxiv.org/pdf/2401.01234v2.pdf#page=3", arxiv("2401.01234")),
        ("www.arxiv.org/abs/hep-th/9901001v1?context=hep-th", arxiv("hep-th/9901001")),
        # bioRxiv and medRxiv links name a version and a view after the DOI
        ("https://www.biorxiv.org/content/10.1101/2020.01.01.123456v1.full", doi("10.1101/2020.01.01.123456")),
        (
            "https://www.medrxiv.org/content/10.1101/2020.03.19.20039354v1.full.pdf",
            doi("10.1101/2020.03.19.20039354"),
        ),
        ("https://www.biorxiv.org/content/10.1101/123456v2", doi("10.1101/123456")),
        ("10.1101/gad.123456.110", doi("10.1101/gad.123456.110")),  # Genes & Dev.: same prefix, not a preprint
        ("https://www.frontiersin.org/articles/10.3389/fpsyg.2020.00001/full", doi("10.3389/fpsyg.2020.00001")),
        # typographic quotes, a trailing slash, what a web page hides in a link
        ("\u201c10.1038/nature14539\u201d", doi("10.1038/nature14539")),
        ("\u2018arXiv:2401.01234\u2019", arxiv("2401.01234")),
        ("10.1038/nature14539/", doi("10.1038/nature14539")),
        ("10.1038/\u200bnature14539", doi("10.1038/nature14539")),
        ("https://doi.org/10.1038/nature14539\u200b", doi("10.1038/nature14539")),
        ("\ufeff10.1038/nature\u00ad14539", doi("10.1038/nature14539")),
    ],
)
def test_forms_found_in_review(text: str, expected: Identifier) -> None:
    assert parse_identifier(text) == expected


def test_sici_dois_and_quotes_in_a_pasted_block() -> None:
    block = (
        f"see {SICI} and again https://doi.org/{SICI}; also \u201c10.1038/nature14539\u201d, "
        "<https://doi.org/10.1021/acs.jctc.5b00178> and 10.1234/abcd;10.5678/efgh; "
        "https://www.arxiv.org/abs/2401.01234?context=cs."
    )
    assert find_identifiers(block) == [
        doi(SICI_VALUE),
        doi("10.1038/nature14539"),
        doi("10.1021/acs.jctc.5b00178"),
        doi("10.1234/abcd"),
        doi("10.5678/efgh"),
        arxiv("2401.01234"),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (SICI, True),  # its ";" is no separator: Add by Identifier takes it, not the importer
        (f"https://doi.org/{SICI}\n2401.01234; 10.1038/nature14539", True),
        ("10.1234/abcd;10.5678/efgh, arXiv:2401.01234v2", True),
        ("10.1234/abcd;2401.01234", True),
        ("\u201c10.1038/nature14539\u201d", True),
        ("@article{x, doi = {10.1038/nature14539}}", False),
        ("10.1038/nature14539 is a paper", False),
        ("", False),
        ("  ;  ", False),
    ],
)
def test_only_identifiers(text: str, expected: bool) -> None:
    assert only_identifiers(text) is expected


# ---- issue 21, defect 9: a DOI that would leave the service's path is none ----


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("10.1234/../../../etc/passwd", "'.' or '..' path segment"),
        ("doi:10.1234/./x", "'.' or '..' path segment"),
        ("https://doi.org/10.1234/%2E%2E/x", "'.' or '..' path segment"),
        ("10.1234/a\x1b[2Jb", "control character"),
        ("10.1234/a\x00b", "control character"),
        ("10.1234/" + "x" * 400, "no DOI is longer than 300"),
    ],
)
def test_a_doi_that_could_not_be_asked_safely_is_refused_with_why(text, why):
    assert parse_identifier(text) is None
    assert find_identifiers(text) == []
    problem = identifier_problem(text)
    assert "is not a usable DOI" in problem and why in problem
    assert "\x1b" not in problem and "\x00" not in problem  # shown escaped


def test_odd_but_real_dois_are_kept():
    for doi in ("10.1002/(sici)1097-4636(199706)35:4<413::aid-jbm2>3.0.co;2-m", "10.1000/a#b?c", "10.1000/a..b"):
        assert parse_identifier(doi) == Identifier("doi", doi)
        assert identifier_problem(doi) == ""
