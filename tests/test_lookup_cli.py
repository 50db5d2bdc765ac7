"""`papershelf lookup` (issue 14 item 3) through the installed command, against the seed replay
set (tests/fixtures/metadata/seeds/, made here: see SOURCES.md there) on the loopback server."""

from __future__ import annotations

import json

from conftest import SEEDS, run_cli
from replay_server import replay_fixture  # noqa: F401
from seed_replay import expected_by_abstract, serve_seeds


def _papers(data_dir) -> dict[str, dict]:
    res = run_cli("list", "--json", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return {p["id"]: p for p in json.loads(res.stdout)}


def _expected(paper: dict) -> dict | None:
    return next((e for start, e in expected_by_abstract().items() if paper["abstract"].startswith(start)), None)


def test_a_dry_run_proposes_then_apply_replaces_only_the_confident_derived_titles(replay, data_dir):
    serve_seeds(replay)
    assert run_cli("import", str(SEEDS[0]), data_dir=data_dir).returncode == 0
    before = _papers(data_dir)
    dry = run_cli("lookup", "--derived", "--json", data_dir=data_dir, env=replay.env())
    assert dry.returncode == 0, dry.stderr
    found = {p["id"]: p for p in json.loads(dry.stdout)}
    assert set(found) == {pid for pid, p in before.items() if p["title_derived"]}
    assert _papers(data_dir) == before  # a dry run changes nothing
    outcomes = {"auto": 0, "proposed": 0, "decoy rejected": 0, "none": 0}
    for pid, result in found.items():
        assert set(result) >= {"id", "service", "confidence", "changes", "applied"}
        assert result["applied"] is False
        want = _expected(before[pid])
        if want is None or want["outcome"] in ("none", "decoy rejected"):
            # nothing to find, or only a look-alike: never a title change
            assert not result["automatic"] and "title" not in result["changes"], result
        elif want["outcome"] == "auto":
            assert result["automatic"], result
            assert result["changes"]["title"] == [before[pid]["title"], want["title"]]
        else:
            assert not result["automatic"] and result["changes"]["title"][1] == want["title"], result
        if want is not None:
            outcomes[str(want["outcome"])] += 1
    assert outcomes["auto"] >= 10 and outcomes["proposed"] >= 1 and outcomes["decoy rejected"] >= 1

    applied = run_cli("lookup", "--derived", "--apply", data_dir=data_dir, env=replay.env())
    assert applied.returncode == 0, applied.stderr
    assert f"{outcomes['auto']} applied" in applied.stdout
    after = _papers(data_dir)
    for pid, paper in after.items():
        want = _expected(before[pid])
        if want is not None and want["outcome"] == "auto":
            assert paper["title"] == want["title"] and not paper["title_derived"]
            if want["year"]:
                assert paper["year"] == want["year"]
            if want["doi"]:
                assert paper["doi"] == want["doi"]
        else:
            assert paper["title"] == before[pid]["title"]
    # a proposed one is applied when named and accepted
    proposed = next(pid for pid in before if (_expected(before[pid]) or {}).get("outcome") == "proposed")
    accepted = run_cli("lookup", proposed, "--apply", "--accept", data_dir=data_dir, env=replay.env())
    assert accepted.returncode == 0, accepted.stderr
    assert _papers(data_dir)[proposed]["title"] == _expected(before[proposed])["title"]


def test_a_pinned_citation_key_never_changes(replay, data_dir):
    serve_seeds(replay)
    assert run_cli("import", str(SEEDS[0]), data_dir=data_dir).returncode == 0
    before = _papers(data_dir)
    pid = next(pid for pid in before if (_expected(before[pid]) or {}).get("outcome") == "auto")
    assert run_cli("key", pid, "MyOwnKey2024", data_dir=data_dir).returncode == 0
    res = run_cli("lookup", pid, "--apply", "--json", data_dir=data_dir, env=replay.env())
    assert res.returncode == 0, res.stderr
    (result,) = json.loads(res.stdout)
    assert result["applied"] is True and "citekey" not in result["changes"]
    assert _papers(data_dir)[pid]["citekey"] == "MyOwnKey2024"


def test_offline_each_paper_says_why_and_nothing_changes(data_dir):
    # every service is a closed port here (tests/conftest.py)
    assert run_cli("import", str(SEEDS[1]), data_dir=data_dir).returncode == 0
    before = _papers(data_dir)
    ids = list(before)[:2]
    res = run_cli("lookup", *ids, "--json", data_dir=data_dir, env={"PAPERSHELF_RATE_SCALE": "0.01"})
    assert res.returncode == 1
    results = json.loads(res.stdout)
    assert [r["id"] for r in results] == ids
    for r in results:
        assert r["changes"] == {} and r["applied"] is False
        assert "Cannot reach" in r["message"], r
    assert "Traceback" not in res.stderr
    assert _papers(data_dir) == before


def test_naming_no_paper_is_a_usage_error(data_dir):
    res = run_cli("lookup", data_dir=data_dir)
    assert res.returncode == 2 and "--derived" in res.stderr
    res = run_cli("lookup", "--derived", "--accept", data_dir=data_dir)
    assert res.returncode == 2 and "--accept goes with --apply" in res.stderr


def test_an_edit_made_while_the_look_up_runs_is_never_overwritten(replay, data_dir):
    from papershelf.core.library import Library

    assert run_cli("import", str(SEEDS[0]), data_dir=data_dir).returncode == 0
    before = _papers(data_dir)
    pid = next(pid for pid in before if (_expected(before[pid]) or {}).get("outcome") == "auto")

    def edit_meanwhile(_query) -> bool:
        # the user types a title in the window while the command waits on arXiv (the command
        # holds no lock during the network: the edit goes through)
        with Library.open(data_dir) as lib:
            if lib.get(pid).title != "My Own Careful Title":
                lib.set_title(pid, "My Own Careful Title")
        return False  # not this route's request: the seed answers come next

    replay.route("/arxiv/api/query", b"", query=edit_meanwhile)
    serve_seeds(replay)
    res = run_cli("lookup", pid, "--apply", "--json", data_dir=data_dir, env=replay.env())
    assert res.returncode == 0, res.stderr
    (result,) = json.loads(res.stdout)
    assert result["applied"] is False and "edited while the look-up ran" in result["message"], result
    assert _papers(data_dir)[pid]["title"] == "My Own Careful Title"
