"""`papershelf show` prints the reader's text, not the LaTeX the listing carried (issue 20:
"what a user looked for")."""

from __future__ import annotations

import json

from conftest import run_cli


def test_show_prints_the_abstract_as_text_not_latex(data_dir, seeds):
    assert run_cli("import", str(seeds[0]), str(seeds[1]), data_dir=data_dir).returncode == 0
    papers = json.loads(run_cli("list", "--json", data_dir=data_dir).stdout)
    marked = {
        macro: next(p for p in papers if macro in p["abstract"])
        for macro in ("\\textsc{VeriSimpl}", "\\emph{non-adversarial}")
    }
    shown = run_cli("show", marked["\\textsc{VeriSimpl}"]["id"], data_dir=data_dir)
    assert shown.returncode == 0, shown.stderr
    assert "\\textsc" not in shown.stdout and "We introduce VeriSimpl, a solver" in shown.stdout
    shown = run_cli("show", marked["\\emph{non-adversarial}"]["id"], data_dir=data_dir).stdout
    assert "\\emph" not in shown and "a tractable and non-adversarial objective" in shown
    # the stored abstract is the paper's own text: --json still gives it as it came
    raw = json.loads(run_cli("show", marked["\\emph{non-adversarial}"]["id"], "--json", data_dir=data_dir).stdout)
    assert "\\emph{non-adversarial}" in raw["abstract"]


def test_show_keeps_the_paragraphs_and_reads_math_and_links(data_dir, tmp_path):
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{k,\n  author = {Knuth, Donald},\n  title = {The \\emph{Art} of $O(n^2)$ Sorting},\n"
        "  journal = {\\textit{Journal} of Algorithms},\n  year = 1984,\n"
        "  abstract = {We sort in $O(n^2)$ time with \\textbf{bubbles}; see [the code](https://example.org/c).\n\n"
        "A second paragraph.},\n}\n"
    )
    assert run_cli("import", str(bib), data_dir=data_dir).returncode == 0
    pid = json.loads(run_cli("list", "--json", data_dir=data_dir).stdout)[0]["id"]
    out = run_cli("show", pid, data_dir=data_dir).stdout
    assert out.splitlines()[0] == "The Art of O(n^2) Sorting"
    assert "venue:    Journal of Algorithms" in out
    assert "We sort in O(n^2) time with bubbles; see the code (https://example.org/c).\n\nA second paragraph." in out


def test_show_reads_every_accent_latex_knows_in_an_abstract(data_dir, tmp_path):
    """An abstract's accents are read by the one accent table (biblio.latex.ACCENTS): the ring,
    dot under, ogonek and bar under too, which the abstract's own reading once lacked (issue 23:
    it printed "rAngstr\u00f6m" for \\r{A}ngstr\\"om)."""
    ris = tmp_path / "films.ris"
    ris.write_text(
        "TY  - JOUR\nAU  - Smith, Jane\nTI  - Thin films\n"
        'AB  - Layers of 5 \\r{A}ngstr\\"om, read by \\k{a}, \\d{s}, \\b{b} and \\v s marks.\n'
        "PY  - 2020\nER  - \n"
    )
    assert run_cli("import", str(ris), data_dir=data_dir).returncode == 0
    pid = json.loads(run_cli("list", "--json", data_dir=data_dir).stdout)[0]["id"]
    shown = run_cli("show", pid, data_dir=data_dir)
    assert shown.returncode == 0, shown.stderr
    assert "Layers of 5 \u00c5ngstr\u00f6m, read by \u0105, \u1e63, \u1e07 and \u0161 marks." in shown.stdout
