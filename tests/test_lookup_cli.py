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


def _look_up_while_the_title_is_edited(replay, data_dir) -> tuple[dict, str, dict]:
    """Import the first seed file and look up a paper found with confidence, while the user
    types a title in the window: the papers before, its id and the command's result."""
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
    return before, pid, result


def test_an_edit_made_while_the_look_up_runs_is_never_overwritten(replay, data_dir):
    _before, pid, result = _look_up_while_the_title_is_edited(replay, data_dir)
    assert result["applied"] is False and "edited after the look-up read it" in result["message"], result
    assert _papers(data_dir)[pid]["title"] == "My Own Careful Title"


# ---- issue 20, defect 3: an offline batch gives up at once, and says how far it is into a pipe ----

STOP = (
    "Cannot reach arXiv, OpenAlex, Crossref or Semantic Scholar: check your internet connection; nothing was changed."
)


def _derived(data_dir) -> list[str]:
    return [pid for pid, p in _papers(data_dir).items() if p["title_derived"]]


def test_offline_the_batch_stops_after_the_first_paper_with_one_message(data_dir):
    # every service is a closed port (tests/conftest.py), and arXiv's real 3 s between requests:
    # a batch that asked for each paper would wait minutes (and outlast run_cli's timeout)
    assert run_cli("import", str(SEEDS[1]), data_dir=data_dir).returncode == 0
    before = _papers(data_dir)
    derived = _derived(data_dir)
    assert len(derived) >= 10
    res = run_cli("lookup", "--derived", data_dir=data_dir, env={"PAPERSHELF_RATE_SCALE": "1"})
    assert res.returncode == 1
    assert res.stdout == ""  # no paper was looked up: nothing to list
    lines = res.stderr.splitlines()
    # into a pipe: it says at once what it does, then the one reason it stopped
    assert lines == [
        f"papershelf: looking up {len(derived)} papers…",
        f"papershelf: {STOP} arXiv: the connection was refused. Stopped after 1 of {len(derived)} papers.",
    ]
    assert _papers(data_dir) == before


def test_a_name_that_does_not_resolve_stops_the_batch_and_every_paper_says_why(data_dir):
    assert run_cli("import", str(SEEDS[1]), data_dir=data_dir).returncode == 0
    derived = _derived(data_dir)
    nowhere = {f"PAPERSHELF_{s}_URL": "http://papershelf-test.invalid" for s in ("ARXIV", "CROSSREF", "OPENALEX", "S2")}
    res = run_cli("lookup", "--derived", "--json", data_dir=data_dir, env={**nowhere, "PAPERSHELF_RATE_SCALE": "1"})
    assert res.returncode == 1
    results = json.loads(res.stdout)
    assert [r["id"] for r in results] == derived  # every paper is in the answer, none was changed
    reason = f"{STOP} arXiv: its name could not be looked up (DNS)."
    assert {r["message"] for r in results} == {reason}
    assert all(r["changes"] == {} and not r["applied"] for r in results)
    assert res.stderr.count("Cannot reach") == 1 and "Traceback" not in res.stderr


def test_no_secure_connection_stops_the_batch(replay, data_dir):
    assert run_cli("import", str(SEEDS[1]), data_dir=data_dir).returncode == 0
    derived = _derived(data_dir)
    # https:// to the plain-HTTP loopback server: the TLS handshake fails
    tls = {
        f"PAPERSHELF_{s.upper()}_URL": replay.base(s).replace("http://", "https://")
        for s in ("arxiv", "crossref", "openalex", "s2")
    }
    res = run_cli("lookup", "--derived", data_dir=data_dir, env={**tls, "PAPERSHELF_RATE_SCALE": "1"})
    assert res.returncode == 1, res.stderr
    assert res.stderr.splitlines()[-1] == (
        f"papershelf: {STOP} arXiv: no secure connection could be made (TLS). Stopped after 1 of {len(derived)} papers."
    )
    assert not replay.requests  # no request was ever read as one


def test_one_unreachable_service_is_skipped_and_the_batch_goes_on_with_the_others(replay, data_dir):
    serve_seeds(replay)
    assert run_cli("import", str(SEEDS[0]), data_dir=data_dir).returncode == 0
    derived = _derived(data_dir)
    env = {**replay.env(), "PAPERSHELF_S2_URL": "http://127.0.0.1:9"}
    res = run_cli("lookup", "--derived", "--json", data_dir=data_dir, env=env)
    results = json.loads(res.stdout)
    assert [r["id"] for r in results] == derived
    assert sum(bool(r["changes"]) for r in results) >= 10  # the others answered
    skipped = [r for r in results if "Semantic Scholar was skipped: it could not be reached" in r["message"]]
    assert skipped  # the papers that would have asked it after it failed say so
    assert sum("Cannot reach Semantic Scholar (127.0.0.1:9)" in r["message"] for r in results) == 1
    lines = res.stderr.splitlines()
    # progress into a pipe: a line per paper, as each is done, then which service was skipped
    assert lines[0] == f"papershelf: looking up {len(derived)} papers…"
    assert [line.split(" ")[1] for line in lines[1 : len(derived) + 1]] == [
        f"{n}/{len(derived)}" for n in range(1, len(derived) + 1)
    ]
    assert lines[-1] == (
        "papershelf: Semantic Scholar was skipped: it could not be reached (the connection was refused): "
        f"skipped for {len(skipped)} papers."
    )
    assert "Cannot reach arXiv, OpenAlex" not in res.stderr


def test_a_service_that_answers_with_errors_is_not_given_up_on(replay, data_dir):
    # arXiv, OpenAlex and Crossref are closed ports; Semantic Scholar is there but failing (500):
    # it answered, so every paper still asks it
    assert run_cli("import", str(SEEDS[1]), data_dir=data_dir).returncode == 0
    derived = _derived(data_dir)[:5]
    replay.route("/s2/graph/v1/paper/search", b"{}", status=500)
    env = {f"PAPERSHELF_{s}_URL": "http://127.0.0.1:9" for s in ("ARXIV", "OPENALEX", "CROSSREF")}
    res = run_cli("lookup", *derived, "--json", data_dir=data_dir, env={**replay.env(), **env})
    assert res.returncode == 1
    results = json.loads(res.stdout)
    assert len(results) == 5 and all("HTTP 500" in r["message"] for r in results), results
    assert len(replay.requests_to("/s2/graph/v1/paper/search")) == 5
    assert "check your internet connection; nothing was changed. arXiv" not in res.stderr


def test_a_paper_edited_while_the_look_up_runs_is_proposed_again_as_it_is_now(replay, data_dir):
    # issue 23: the window and the command line apply what was found by one rule
    # (Library.apply_found): the edit wins, and what was found is proposed against the paper as
    # it is now, not as it was read (the command line showed the stale changes)
    before, pid, result = _look_up_while_the_title_is_edited(replay, data_dir)
    assert result["applied"] is False and result["automatic"] is False, result
    assert result["changes"]["title"] == ["My Own Careful Title", _expected(before[pid])["title"]], result
    assert "proposed again" in result["message"], result
    assert _papers(data_dir)[pid]["title"] == "My Own Careful Title"


def test_a_found_value_the_library_refuses_is_left_out_and_the_others_are_applied(replay, data_dir, tmp_path):
    # issue 23: the command line refused the whole paper for one bad value (the window kept the
    # others); both now follow Library.apply_found: the others are applied, the refused one told
    abstract = (
        "We measure how often bibliographic records name an organisation as their author and how "
        "reference managers keep such names intact when they are exported, edited and imported again. "
        "Across twelve thousand records drawn from four publishers we find that braces guarding "
        "corporate names are lost or doubled in one record out of nine, and we propose a repair that "
        "restores the original grouping from the record's own history without asking the user."
    )
    doi = "10.5555/brace.2021.1"
    bib = tmp_path / "one.bib"
    bib.write_text(
        "@article{brace2021,\n  title = {Keeping Corporate Author Names Whole},\n"
        f"  doi = {{{doi}}},\n  abstract = {{{abstract}}}\n}}\n",
        encoding="utf-8",
    )
    work = {
        "status": "ok",
        "message-type": "work",
        "message": {
            "DOI": doi,
            "title": ["Keeping Corporate Author Names Whole"],
            "abstract": f"<jats:p>{abstract}</jats:p>",
            "author": [{"name": "The {Brace Consortium"}],  # a brace BibTeX cannot take as written
            "issued": {"date-parts": [[2021, 5]]},
            "volume": "7",
            "type": "journal-article",
        },
    }
    replay.route(f"/crossref/works/{doi}", json.dumps(work).encode())
    assert run_cli("import", str(bib), data_dir=data_dir).returncode == 0
    (pid,) = _papers(data_dir)
    res = run_cli("lookup", pid, "--apply", "--accept", "--json", data_dir=data_dir, env=replay.env())
    assert "Traceback" not in res.stderr
    (result,) = json.loads(res.stdout)
    assert "author" in result["changes"] and result["applied"] is True, result
    assert "author: " in result["message"] and "brace" in result["message"], result
    paper = _papers(data_dir)[pid]
    assert paper["year"] == 2021 and paper["fields"]["volume"] == "7"  # the others were taken
    assert paper["authors"] == []  # the refused one was not
