"""Names have one home (issue 23, core/biblio/names.py): one family-name rule for duplicates,
ids, citation keys, the export and look-ups, shown on the name forms the old copies of the rule
each got wrong, through the installed command."""

from __future__ import annotations

import re

from conftest import cli_ok, import_in_turn, listed_papers

# one paper of a junior, as a .bib writes it ("von Last, Jr, First") and as RIS does (AU Last,
# First, Suffix); no DOI, no abstract: only the title, first author and year can tell
JUNIOR_BIB = """@article{king1963,
  author = {King, Jr., Martin Luther},
  title = {Letter from Birmingham Jail},
  journal = {The Atlantic Monthly},
  year = {1963}
}
"""
JUNIOR_RIS = """TY  - JOUR
AU  - King, Martin Luther, Jr.
TI  - Letter from Birmingham Jail
JO  - The Atlantic Monthly
PY  - 1963
ER  -
"""

LISTING = """Theory · Optimization

Harry Fletcher III

We study how curvature estimates from weight-space symmetries can be used to build structured
Hessian approximations that are cheap to store and invert, and we test them on benchmarks.
"""


def test_a_junior_from_a_bib_and_from_an_ris_is_one_paper(data_dir, tmp_path):
    # the .bib shows "Martin Luther King, Jr.", the RIS "Martin Luther King": duplicates.py took
    # the part before the comma ("martin luther king") for the first's family name, "king" for
    # the second's, and kept two papers
    res = import_in_turn(data_dir, {tmp_path / "king.bib": JUNIOR_BIB, tmp_path / "king.ris": JUNIOR_RIS})
    assert "0 added, 1 merged" in res.stdout
    (paper,) = listed_papers(data_dir)
    assert paper["authors"] == ["Martin Luther King, Jr."]


def test_one_paper_gets_one_id_in_any_library_whatever_the_form_of_its_authors_name(tmp_path):
    # a paper's id is its fingerprint's, and without an abstract the fingerprint holds the first
    # author's family name: dedupe.py took the last word ("Jr." for "Martin Luther King, Jr.";
    # "donald" for "Knuth, Donald"), so the .bib and the RIS of one paper got two ids
    bib, ris = tmp_path / "king.bib", tmp_path / "king.ris"
    bib.write_text(JUNIOR_BIB, encoding="utf-8")
    ris.write_text(JUNIOR_RIS, encoding="utf-8")
    one, two = tmp_path / "one", tmp_path / "two"
    cli_ok("import", str(bib), data_dir=one)
    cli_ok("import", str(ris), data_dir=two)
    (a,), (b,) = listed_papers(one), listed_papers(two)
    assert a["authors"] != b["authors"]  # the two files show the name differently
    assert a["id"] == b["id"]


def _exported_listing(listing_text: str, data_dir, tmp_path) -> tuple[str, list[str]]:
    """Import a listing, export it as BibTeX: the export's text, and the authors the export
    brings back in a library of its own."""
    listing = tmp_path / "listing.txt"
    listing.write_text(listing_text, encoding="utf-8")
    cli_ok("import", str(listing), data_dir=data_dir)
    out = tmp_path / "out.bib"
    cli_ok("export", "--force", "-o", str(out), data_dir=data_dir)
    again = tmp_path / "again"
    cli_ok("import", str(out), data_dir=again)
    (paper,) = listed_papers(again)
    return out.read_text(encoding="utf-8"), paper["authors"]


def test_a_name_with_a_suffix_is_exported_and_keyed_by_its_family_name(data_dir, tmp_path):
    # the exporter and the citation keys took the last word for the family name: BibTeX read
    # "III, Harry Fletcher" (family "III") and the key began "iii"
    text, authors_back = _exported_listing(LISTING, data_dir, tmp_path)
    assert re.search(r"author\s*=\s*\{Fletcher, III, Harry\}", text), text
    assert re.search(r"@\w+\{fletcher", text), text
    assert authors_back == ["Harry Fletcher III"]  # it comes back as the same name


PARTICLES_LISTING = """Theory · Generative Models

Valentin De Bortoli, Guy Van den Broeck, Ludwig van Beethoven

We study when diffusion models reproduce their training data and what can be done about it,
with bounds that hold for score estimates learned from finite samples of the data distribution.
"""


def test_a_capitalised_particle_stays_with_the_family_name_in_the_export(data_dir, tmp_path):
    # BibTeX's rule takes only lower-case words as "von": the one name rule first read "Valentin
    # De Bortoli" as family "Bortoli", given "Valentin De" (the export before it wrote "De Bortoli")
    text, authors_back = _exported_listing(PARTICLES_LISTING, data_dir, tmp_path)
    assert re.search(
        r"author\s*=\s*\{De Bortoli, Valentin and Van den Broeck, Guy and van Beethoven, Ludwig\}", text
    ), text
    assert authors_back == ["Valentin De Bortoli", "Guy Van den Broeck", "Ludwig van Beethoven"]
    ris = tmp_path / "out.ris"
    cli_ok("export", "--format", "ris", "--force", "-o", str(ris), data_dir=data_dir)
    assert "AU  - De Bortoli, Valentin" in ris.read_text(encoding="utf-8")
