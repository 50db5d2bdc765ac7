"""One DOI rule (core/biblio/identifiers.py): a resolver's link is read the same way by the RIS
import (a UR line without DO) and by `set doi=…`, whichever resolver host it names."""

from __future__ import annotations

import json

from conftest import run_cli

RIS = """TY  - JOUR
TI  - A Paper Linked Through the Resolver
AU  - Ames, Ann
PY  - 2021
UR  - https://www.doi.org/10.1234/abc.5
ER  -
"""


def _papers(data_dir) -> list[dict]:
    res = run_cli("list", "--json", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_a_www_resolver_link_is_a_doi_in_a_ris_import_and_in_set(data_dir, tmp_path):
    # the RIS import knew only doi.org and dx.doi.org (clean_doi, which `set` uses, the same two)
    ris = tmp_path / "linked.ris"
    ris.write_text(RIS, encoding="utf-8")
    res = run_cli("import", str(ris), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    (paper,) = _papers(data_dir)
    assert paper["doi"] == "10.1234/abc.5"

    res = run_cli("set", paper["id"], "doi=https://www.doi.org/10.5555/other.7", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert _papers(data_dir)[0]["doi"] == "10.5555/other.7"
