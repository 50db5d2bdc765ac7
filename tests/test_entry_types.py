"""One entry-type and field model (core/biblio/types.py): the viewer, `show` and the RIS
export read a thesis's `type` key from the same table as the BibTeX export."""

from __future__ import annotations

import json
import re

from conftest import run_cli

HAB_BIB = r"""@thesis{roe2019,
  author = {Roe, Richard},
  title = {Zeta Functions of Curves},
  institution = {University of Somewhere},
  type = {habthesis},
  year = {2019},
}
"""


def test_show_names_a_habilitation_thesis_as_the_bibtex_export_does(tmp_path):
    # the viewer's table lacked habthesis (the BibTeX export's had it): `show` said "Thesis"
    # and printed the key "habthesis" as a field of its own
    data_dir = tmp_path / "library"
    bib = tmp_path / "roe.bib"
    bib.write_text(HAB_BIB, encoding="utf-8")
    assert run_cli("import", str(bib), data_dir=data_dir).returncode == 0
    pid = json.loads(run_cli("list", "--json", data_dir=data_dir).stdout)[0]["id"]
    res = run_cli("show", pid, data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert "type:     Habilitation thesis" in lines, res.stdout
    assert not any("habthesis" in line for line in lines), res.stdout
    exported = run_cli("export", "--dialect", "bibtex", "-o", str(tmp_path / "out.bib"), data_dir=data_dir)
    assert exported.returncode == 0, exported.stderr
    assert re.search(
        r"^  type +=  ?\{Habilitation thesis\},$", (tmp_path / "out.bib").read_text(encoding="utf-8"), re.M
    )
