"""Issue 21 "Every input bounded", the online part (defects 4, 7, 8, 9), through the installed
command against loopback servers: answers nested too deeply, the contact e-mail and redirects to
other hosts, slow servers and the deadlines of a request and of a paper, DOIs that would leave
the service's path.

The deadlines are made short here by `PAPERSHELF_REQUEST_SECONDS` and `PAPERSHELF_PAPER_SECONDS`;
no test asserts how long anything took (tests/perf/slow_server.py measures that)."""

from __future__ import annotations

import json
import re

from conftest import SEEDS, listed_papers, run_cli
from replay_server import RECORDED, ReplayServer, Reply, replay_fixture  # noqa: F401
from seed_replay import serve_seeds

PNAS = "10.1073/pnas.1414271111"
PNAS_JSON = RECORDED / "crossref_works_doi_10.1073_pnas.1414271111.json"
MAILTO = "ann@example.org"


# ---- defect 4: an answer nested too deeply is that service's failure, the batch goes on ----


def test_deeply_nested_json_fails_that_service_and_the_batch_applies_what_the_others_found(replay, data_dir):
    nested = Reply(b"[" * 100_000, 200, {"Content-Type": "application/json"})
    replay.route("/openalex/works", nested)  # before the seeds' answers: every search gets it
    replay.route("/s2/graph/v1/paper/search", nested)
    serve_seeds(replay)
    assert run_cli("import", str(SEEDS[0]), data_dir=data_dir).returncode == 0
    res = run_cli("lookup", "--derived", "--apply", "--json", data_dir=data_dir, env=replay.env())
    assert "Traceback" not in res.stderr and "RecursionError" not in res.stderr, res.stderr[-2000:]
    results = json.loads(res.stdout)
    assert replay.requests_to("/openalex/works"), "the look-up never asked OpenAlex"
    unread = [r for r in results if "OpenAlex sent an answer Papershelf cannot read" in r["message"]]
    assert unread and all("nested too deeply" in r["message"] for r in unread), results
    applied = [r for r in results if r["applied"]]
    assert len(applied) >= 5  # what arXiv found is applied all the same
    titles = {p["id"]: p for p in listed_papers(data_dir)}
    assert all(not titles[r["id"]]["title_derived"] for r in applied)
    assert res.returncode == 1  # some papers did fail: said so


def test_a_registrars_bibtex_with_an_empty_author_is_added_without_it(replay, data_dir):
    # doi.org's BibTeX naming an author of nothing but braces ({{}}): no name, not a traceback
    bib = b"@article{k, title={Braced Nothing}, author={{}}, doi={10.1234/empty}}"
    replay.route("/doi/10.1234/empty", Reply(bib, 200, {"Content-Type": "application/x-bibtex"}))
    res = run_cli("add", "10.1234/empty", data_dir=data_dir, env=replay.env())
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    assert res.returncode == 0, res.stderr
    (paper,) = listed_papers(data_dir)
    assert paper["title"] == "Braced Nothing" and paper["authors"] == []


def test_an_answer_of_nothing_but_angle_brackets_is_read_in_one_pass(replay, data_dir):
    # Crossref's titles and abstracts are markup whose tags are dropped: a megabyte of "<" with no
    # ">" once took each "<" a scan to the end (hours, past every deadline, deaf to Cancel);
    # run_cli's 120 s timeout is the bound here, far above the one pass it now takes
    work = json.loads(PNAS_JSON.read_text())
    work["message"]["title"] = ["<" * 1_000_000]
    work["message"]["abstract"] = "<jats:p>" + "<" * 1_000_000
    replay.route(f"/crossref/works/{PNAS}", Reply(json.dumps(work).encode(), 200, {"Content-Type": "application/json"}))
    res = run_cli("add", PNAS, data_dir=data_dir, env=replay.env())
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    assert res.returncode in (0, 1), res.stderr


def test_a_search_answer_longer_than_asked_is_read_only_as_far_as_asked(replay, data_dir):
    # a search asks for 5 (Crossref's rows): an answer of thousands is read no further than that,
    # so its size cannot stretch a paper's look-up past its deadline in reading and matching; the
    # paper's own record, put after them, is never seen
    assert run_cli("import", str(SEEDS[0]), data_dir=data_dir).returncode == 0
    paper = listed_papers(data_dir)[0]
    other = {
        "title": ["Another Paper"],
        "abstract": "Something else entirely, about rivers.",
        "type": "journal-article",
    }
    items = [{**other, "DOI": f"10.5555/other{i}"} for i in range(3000)]
    items.append(
        {
            "DOI": "10.5555/found",
            "title": [paper["title"]],
            "abstract": paper["abstract"],
            "author": [{"name": a} for a in paper["authors"]],
            "type": "journal-article",
        }
    )
    answer = {"status": "ok", "message-type": "work-list", "message": {"items": items}}
    replay.route("/crossref/works", Reply(json.dumps(answer).encode(), 200, {"Content-Type": "application/json"}))
    res = run_cli("lookup", paper["id"], "--json", data_dir=data_dir, env=replay.env())
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    (result,) = json.loads(res.stdout)
    assert "10.5555/found" not in json.dumps(result), result


def test_a_lone_surrogate_escaped_in_an_answer_is_replaced_not_a_traceback(replay, data_dir):
    # JSON may escape half a UTF-16 pair ("\\ud800"): no UTF-8 text can hold it, printing it crashed
    work = json.loads(PNAS_JSON.read_text())
    work["message"]["title"] = ["Lone \ud800 Half"]
    work["message"]["author"] = [{"given": "Ann\udfff", "family": "Smith"}]
    replay.route(f"/crossref/works/{PNAS}", Reply(json.dumps(work).encode(), 200, {"Content-Type": "application/json"}))
    res = run_cli("add", PNAS, data_dir=data_dir, env=replay.env())
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    assert res.returncode == 0, res.stderr
    (paper,) = listed_papers(data_dir)
    assert paper["title"] == "Lone \ufffd Half" and paper["authors"] == ["Ann\ufffd Smith"]


def test_an_arxiv_entry_id_of_many_abs_paths_is_read_in_one_pass(replay, data_dir):
    # an <id> repeating "arxiv.org/abs/" and ending in "?" once took each repeat a scan to the end
    # and back (140 KB: minutes, past every deadline); run_cli's 120 s timeout is the bound here
    ident = "http://arxiv.org/abs/" + "arxiv.org/abs/" * 10_000 + "?x"
    feed = (
        '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><entry>'
        f"<id>{ident}</id><title>Hostile</title></entry></feed>"
    )
    replay.route("/arxiv/api/query", Reply(feed.encode(), 200, {"Content-Type": "application/atom+xml"}))
    res = run_cli("add", "arXiv:2401.01234", data_dir=data_dir, env=replay.env())
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    assert res.returncode in (0, 1), res.stderr


# ---- defect 7: the contact goes to Crossref's and OpenAlex's hosts only, never where they redirect ----


def _add_redirected(replay, data_dir, status: int, query: str = ""):
    """`add` of PNAS whose Crossref answer redirects to another loopback server (another port:
    another host as far as the contact is concerned); the requests the first and the other got."""
    other = ReplayServer()
    try:
        other.route(f"/crossref/works/{PNAS}", PNAS_JSON)
        where = f"{other.base('crossref')}/works/{PNAS}{query}"
        replay.route(f"/crossref/works/{PNAS}", Reply(b"", status, {"Location": where}))
        res = run_cli("add", "--mailto", MAILTO, PNAS, data_dir=data_dir, env=replay.env())
        assert res.returncode == 0, res.stderr
        (first,) = replay.requests_to(f"/crossref/works/{PNAS}")
        (followed,) = other.requests_to(f"/crossref/works/{PNAS}")
        return first, followed
    finally:
        other.close()


def test_the_contact_is_not_sent_to_the_host_a_redirect_leads_to(replay, data_dir):
    first, followed = _add_redirected(replay, data_dir, 302)
    assert f"mailto:{MAILTO}" in first.headers["user-agent"] and first.query["mailto"] == MAILTO
    assert followed.headers["user-agent"].startswith("Papershelf/")
    assert MAILTO not in followed.raw_path and not any(MAILTO in v for v in followed.headers.values())
    assert len(listed_papers(data_dir)) == 1  # the answer found there is still used


def test_a_redirect_that_names_the_contact_in_its_address_loses_it(replay, data_dir):
    _first, followed = _add_redirected(replay, data_dir, 307, f"?mailto={MAILTO}&x=1")
    assert "mailto" not in followed.query and followed.query["x"] == "1"


def test_the_contact_is_in_no_message_and_no_kept_answer(replay, data_dir, tmp_path):
    # every service answers 404 (no route): the message names the address asked, without the contact
    assert run_cli("import", str(SEEDS[0]), data_dir=data_dir).returncode == 0
    first = listed_papers(data_dir)[0]["id"]
    res = run_cli("lookup", "--mailto", MAILTO, first, "--json", data_dir=data_dir, env=replay.env())
    assert replay.requests_to("/crossref/works")[0].query["mailto"] == MAILTO  # Crossref was given it
    (result,) = json.loads(res.stdout)
    assert "Crossref (127.0.0.1:" in result["message"] and "HTTP 404" in result["message"]
    assert MAILTO not in res.stdout and "ann%40example.org" not in res.stdout and MAILTO not in res.stderr
    kept = [f.read_text() for f in (tmp_path / "cache").rglob("*.json")]
    assert kept and not any(MAILTO in k or "ann%40example.org" in k for k in kept)


def test_an_answer_kept_with_the_contact_by_an_older_version_does_not_show_it(replay, data_dir, tmp_path):
    # answers kept before the contact was taken out of their address still name it: asked again
    assert run_cli("import", str(SEEDS[0]), data_dir=data_dir).returncode == 0
    first = listed_papers(data_dir)[0]["id"]
    assert run_cli("lookup", first, data_dir=data_dir, env=replay.env()).returncode == 1  # every answer a 404
    kept = list((tmp_path / "cache").rglob("*.json"))
    assert kept
    for file in kept:
        data = json.loads(file.read_text())
        data["url"] += "&mailto=ann%40example.org"
        file.write_text(json.dumps(data))
    res = run_cli("lookup", "--mailto", MAILTO, first, "--json", data_dir=data_dir, env=replay.env())
    (result,) = json.loads(res.stdout)
    assert "HTTP 404" in result["message"]
    assert "ann%40example.org" not in res.stdout and MAILTO not in res.stdout


def test_a_redirect_to_an_address_that_cannot_be_used_blames_the_server_not_the_settings(replay, data_dir):
    # the user set no PAPERSHELF_CROSSREF_URL: the words must not send them to check it
    replay.route(f"/crossref/works/{PNAS}", Reply(b"", 302, {"Location": "ftp://example.org/x"}))
    res = run_cli("add", PNAS, data_dir=data_dir, env=replay.env())
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert "PAPERSHELF_CROSSREF_URL" not in res.stderr, res.stderr
    assert "Crossref (127.0.0.1:" in res.stderr and "redirected us to an address Papershelf cannot use" in res.stderr


# ---- defect 8: a request's 20 s are its whole time; a paper's deadline; waits are said ----


def test_a_dripping_server_is_abandoned_at_the_request_deadline_and_the_wait_is_said(replay, data_dir):
    # a byte every 0.2 s never trips a per-read timeout: only a deadline on the whole request ends it
    replay.route(f"/crossref/works/{PNAS}", Reply(PNAS_JSON, trickle=0.2))
    env = {**replay.env(), "PAPERSHELF_REQUEST_SECONDS": "1"}
    res = run_cli("add", PNAS, data_dir=data_dir, env=env)
    assert res.returncode == 1
    assert "papershelf: Still waiting for Crossref…" in res.stderr.splitlines()
    assert "Crossref (127.0.0.1:" in res.stderr and "took too long answering (more than 1 s in all)" in res.stderr
    assert "Traceback" not in res.stderr
    assert listed_papers(data_dir) == []


def test_a_retry_after_is_waited_for_and_said(replay, data_dir):
    replay.route(f"/crossref/works/{PNAS}", [Reply(b"{}", 429, {"Retry-After": "1"}), Reply(PNAS_JSON)])
    res = run_cli("add", PNAS, data_dir=data_dir, env=replay.env())
    assert res.returncode == 0, res.stderr
    assert "papershelf: Waiting 1 s: Crossref asked us to slow down…" in res.stderr.splitlines()
    assert len(listed_papers(data_dir)) == 1


def test_a_retry_after_past_the_papers_deadline_is_not_waited_for(replay, data_dir):
    replay.route(f"/crossref/works/{PNAS}", [Reply(b"{}", 429, {"Retry-After": "5"}), Reply(PNAS_JSON)])
    env = {**replay.env(), "PAPERSHELF_PAPER_SECONDS": "2"}
    res = run_cli("add", PNAS, data_dir=data_dir, env=env)
    assert res.returncode == 1
    assert re.search(
        r"asked us to wait 5 s \(HTTP 429\), and this paper's look-up has only [12] s left of its 2 s", res.stderr
    )
    assert "Waiting" not in res.stderr  # nothing was waited for
    assert len(replay.requests_to(f"/crossref/works/{PNAS}")) == 1
    assert listed_papers(data_dir) == []


def test_a_retry_after_shorter_than_the_deadline_but_past_what_is_left_says_what_is_left(replay, data_dir):
    # 2 s of the paper's 4 s go on the first pause; the second asks 3 s: under 4, over what is left
    replay.route(
        f"/crossref/works/{PNAS}",
        [Reply(b"{}", 429, {"Retry-After": "2"}), Reply(b"{}", 429, {"Retry-After": "3"}), Reply(PNAS_JSON)],
    )
    env = {**replay.env(), "PAPERSHELF_PAPER_SECONDS": "4"}
    res = run_cli("add", PNAS, data_dir=data_dir, env=env)
    assert res.returncode == 1
    assert "asked us to wait 3 s (HTTP 429)" in res.stderr
    assert "(4 s in all)" not in res.stderr  # 3 s is not longer than 4 s: the words must say what was left
    assert re.search(r"only [12] s left of its 4 s", res.stderr), res.stderr
    assert len(replay.requests_to(f"/crossref/works/{PNAS}")) == 2


def test_a_papers_deadline_stops_asking_for_it_and_the_batch_goes_on(replay, data_dir):
    assert run_cli("import", str(SEEDS[1]), data_dir=data_dir).returncode == 0
    derived = [p["id"] for p in listed_papers(data_dir) if p["title_derived"]][:2]
    for path in ("/arxiv/api/query", "/openalex/works", "/crossref/works", "/s2/graph/v1/paper/search"):
        replay.route(path, hang=True)
    env = {**replay.env(), "PAPERSHELF_REQUEST_SECONDS": "0.6", "PAPERSHELF_PAPER_SECONDS": "1.5"}
    res = run_cli("lookup", *derived, "--json", data_dir=data_dir, env=env)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    results = json.loads(res.stdout)
    assert [r["id"] for r in results] == derived  # the second paper was looked up too
    for r in results:
        assert "the look-up of this paper took more than 1.5 s in all" in r["message"], r
        assert "Semantic Scholar" not in r["message"]  # not asked: the paper's time was up
    assert not replay.requests_to("/s2/graph/v1/paper/search")


def test_a_service_whose_next_turn_is_past_the_papers_deadline_is_skipped_not_the_paper(replay, data_dir):
    # Crossref asks for a pause longer than a paper may take: the first paper is told so; the next
    # paper finds Crossref's turn still far off, and must still ask Semantic Scholar (after it)
    assert run_cli("import", str(SEEDS[0]), data_dir=data_dir).returncode == 0
    two = [p["id"] for p in listed_papers(data_dir)][:2]
    replay.route("/crossref/works", Reply(b"{}", 429, {"Retry-After": "30"}))  # the others: 404
    env = {**replay.env(), "PAPERSHELF_PAPER_SECONDS": "20"}
    res = run_cli("lookup", *two, "--json", data_dir=data_dir, env=env)
    assert "Traceback" not in res.stderr
    results = json.loads(res.stdout)
    assert [r["id"] for r in results] == two
    for r in results:
        assert "took more than 20 s in all" not in r["message"], r  # neither paper took its time
        assert "Crossref" in r["message"], r
    assert len(replay.requests_to("/crossref/works")) == 1  # not asked again before its time
    assert len(replay.requests_to("/s2/graph/v1/paper/search")) == 2  # both papers asked S2


# ---- defect 9: a DOI cannot leave the service's path ----


def test_a_doi_with_dot_segments_is_refused_before_any_request(replay, data_dir):
    for doi in ("10.1234/../../../etc/passwd", "https://doi.org/10.1234/%2e%2e/%2e%2e/etc/passwd"):
        res = run_cli("add", doi, data_dir=data_dir, env=replay.env())
        assert res.returncode == 2, res.stderr
        assert "is not a usable DOI: it holds a '.' or '..' path segment" in res.stderr
        assert "Traceback" not in res.stderr
    res = run_cli("add", "10.1234/a\x1b]0;pwned\x07b", data_dir=data_dir, env=replay.env())
    assert res.returncode == 2 and "control character" in res.stderr and "\x1b" not in res.stderr
    assert replay.requests == []  # nobody was asked anything
    assert listed_papers(data_dir) == []


def test_a_doi_with_odd_characters_reaches_the_service_whole_and_encoded(replay, data_dir):
    sici = "10.1002/(sici)1097-4636(199706)35:4<413::aid-jbm2>3.0.co;2-m"
    odd = "10.1000/a#b?c"
    for doi in (sici, odd):
        replay.route(f"/crossref/works/{doi}", PNAS_JSON)
    res = run_cli("add", sici, odd, data_dir=data_dir, env=replay.env())
    assert res.returncode == 0, res.stderr
    raw = {r.path: r.raw_path for r in replay.requests}
    encoded = "/crossref/works/10.1002/%28sici%291097-4636%28199706%2935:4%3C413"
    assert raw[f"/crossref/works/{sici}"].startswith(encoded)
    assert raw[f"/crossref/works/{odd}"] == "/crossref/works/10.1000/a%23b%3Fc"  # no query, no fragment
    assert all("/etc/" not in r.path for r in replay.requests)


def test_an_arxiv_abstract_longer_than_any_papers_is_refused_before_its_tex_is_decoded(replay, data_dir):
    # decoding hostile TeX costs up to tens of microseconds a character, outside every deadline:
    # an answer was decoded whole before the library's door refused the record; now the answer
    # is refused before its text is decoded, naming the service and the part
    accents = '\\"o' * 1_700_000
    feed = (
        '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><entry>'
        "<id>http://arxiv.org/abs/2401.01234v1</id><title>Hostile</title>"
        f"<summary>{accents}</summary></entry></feed>"
    )
    replay.route("/arxiv/api/query", Reply(feed.encode(), 200, {"Content-Type": "application/atom+xml"}))
    res = run_cli("add", "arXiv:2401.01234", data_dir=data_dir, env=replay.env())
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    assert res.returncode == 1, res.stderr
    assert "its abstract is 5,100,000 characters long, more than any paper's (the limit is 100,000)" in res.stderr
    assert not any(b"Hostile" in p.read_bytes() for p in data_dir.rglob("*") if p.is_file())  # nothing saved
