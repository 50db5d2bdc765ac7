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


def test_every_table_of_types_names_the_model_s_types():
    from papershelf.core.biblio import types
    from papershelf.core.exporters.ris import RIS_TYPE_OF
    from papershelf.core.importers.ris import RIS_TYPES
    from papershelf.core.online._readers import CROSSREF_TYPES, OPENALEX_TYPES, S2_TYPES

    # the foreign vocabularies (RIS, Crossref, OpenAlex, Semantic Scholar) map onto the model's names
    for table in (RIS_TYPES, CROSSREF_TYPES, OPENALEX_TYPES, S2_TYPES):
        assert set(table.values()) <= types.KNOWN_TYPES
    assert set(RIS_TYPE_OF) <= types.KNOWN_TYPES
    for kinds in (types.COMMON_TYPES, types.REQUIRED, types.VENUE_FIELD, types.TYPES_TO_BIBTEX, types.IN_TYPES):
        assert set(kinds) <= types.KNOWN_TYPES
    assert types.BIBTEX_TYPES <= types.KNOWN_TYPES and set(types.TYPES_TO_BIBTEX.values()) <= types.BIBTEX_TYPES
