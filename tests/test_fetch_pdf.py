"""`papershelf fetch-pdf` (issue 24, item 3) through the installed command, against the loopback
server (tests/replay_server.py) standing for arXiv (`PAPERSHELF_ARXIV_URL`: its PDFs are at
<that>/pdf/<id>) and for an open-access host: a real PDF (tests/pdfs.py), a web page served with
status 200, a redirect to file:///etc/passwd, a body that does not end, a 404, a 503 with
Retry-After. What the user sees is asserted: the file attached (`show --json`), nothing kept on a
failure (no file in the library's files/ folder nor in the download folder), the words."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run_cli
from pdfs import arxiv_paper, doi_paper
from replay_server import Reply, replay_fixture  # noqa: F401  (the `replay` fixture)

ARXIV_ID = "2401.01234"
BIB = """@article{withArxiv,
  title = {A Paper on arXiv},
  author = {Doe, Jane},
  year = {2024},
  eprint = {2401.01234},
  archiveprefix = {arXiv},
}

@article{withLink,
  title = {An Open Access Paper},
  author = {Roe, Richard},
  year = {2023},
  url = {LINK},
}

@article{nowhere,
  title = {A Paper With Nothing To Fetch},
  author = {Poe, Edgar},
  year = {2022},
  url = {http://127.0.0.1:9/a/landing-page},
}
"""


@pytest.fixture
def shelf(tmp_path, replay, data_dir):
    """A library of three papers (one with an arXiv id, one whose url is a PDF on the loopback
    server, one with neither), the real PDFs, and the environment pointing at the server."""
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB.replace("LINK", f"{replay.url}/oa/papers/open%20paper.pdf"), "utf-8")
    res = run_cli("import", str(bib), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    papers = {p["citekey"]: p["id"] for p in json.loads(run_cli("list", "--json", data_dir=data_dir).stdout)}
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    env = {**replay.env(), "PAPERSHELF_FETCH_SECONDS": "20", "PAPERSHELF_FETCH_MAX_BYTES": str(4 * 1024 * 1024)}
    return {"ids": papers, "arxiv_pdf": arxiv_paper(pdfs), "oa_pdf": doi_paper(pdfs), "env": env, "tmp": tmp_path}


def fetch(shelf, data_dir, *args: str, **env: str):
    res = run_cli("fetch-pdf", *args, data_dir=data_dir, env={**shelf["env"], **env})
    assert "Traceback" not in res.stderr, res.stderr
    return res


def files_of(data_dir: Path, pid: str) -> list[dict]:
    res = run_cli("show", pid, "--json", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)["files"]


def nothing_kept(data_dir: Path, shelf) -> None:
    """No file in the library's files/ folder, none waiting in the download folder."""
    files = data_dir / "files"
    assert not files.exists() or not [p for p in files.rglob("*") if p.is_file()]
    downloads = shelf["tmp"] / "cache" / "downloads"
    assert not downloads.exists() or not [p for p in downloads.rglob("*") if p.is_file()]


def test_an_arxiv_paper_gets_its_pdf_attached(shelf, replay, data_dir):
    replay.route(f"/arxiv/pdf/{ARXIV_ID}", Reply(shelf["arxiv_pdf"], 200, {"Content-Type": "application/pdf"}))
    pid = shelf["ids"]["withArxiv"]
    res = fetch(shelf, data_dir, pid)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"attached files/withArxiv/{ARXIV_ID}.pdf" in res.stdout and "1 PDF attached" in res.stdout
    (attached,) = files_of(data_dir, pid)
    stored = data_dir / attached["path"]
    assert stored.read_bytes() == shelf["arxiv_pdf"].read_bytes()
    assert attached["size"] == stored.stat().st_size and attached["pages"] >= 1
    (request,) = replay.requests_to(f"/arxiv/pdf/{ARXIV_ID}")
    assert request.headers["user-agent"].startswith("Papershelf/")  # the polite User-Agent, no contact
    assert "mailto" not in request.headers["user-agent"]
    # fetched again: the same file is not attached twice
    again = fetch(shelf, data_dir, pid)
    assert again.returncode == 0 and "already attached" in again.stdout
    assert len(files_of(data_dir, pid)) == 1
    downloads = shelf["tmp"] / "cache" / "downloads"
    assert not [p for p in downloads.rglob("*") if p.is_file()]  # the download folder is emptied


def test_all_missing_fetches_what_can_be_fetched_and_skips_papers_with_a_pdf(shelf, replay, data_dir):
    replay.route(f"/arxiv/pdf/{ARXIV_ID}", Reply(shelf["arxiv_pdf"], 200, {"Content-Type": "application/pdf"}))
    replay.route("/oa/papers/open paper.pdf", Reply(shelf["oa_pdf"], 200, {"Content-Type": "application/pdf"}))
    res = fetch(shelf, data_dir, "--all-missing")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "2 PDFs attached" in res.stdout and "1 paper with nowhere to fetch from" in res.stdout
    assert "no arXiv id, and its record names no PDF" in res.stdout
    ids = shelf["ids"]
    assert [f["path"] for f in files_of(data_dir, ids["withLink"])] == ["files/withLink/open paper.pdf"]
    assert len(files_of(data_dir, ids["withArxiv"])) == 1 and files_of(data_dir, ids["nowhere"]) == []
    replay.clear()
    # a second run: the papers with their PDF are skipped, nothing is asked of anyone
    res = fetch(shelf, data_dir, "--all-missing")
    assert res.returncode == 0 and "1 paper with nowhere to fetch from" in res.stdout
    assert replay.requests == []


def test_a_paper_named_with_nowhere_to_fetch_from_fails_in_words(shelf, replay, data_dir):
    res = fetch(shelf, data_dir, shelf["ids"]["nowhere"])
    assert res.returncode == 1
    assert "no arXiv id, and its record names no PDF" in res.stderr and "0 PDFs attached, 1 failed" in res.stdout
    assert replay.requests == []


def test_a_web_page_served_as_200_is_refused(shelf, replay, data_dir):
    page = b"<!DOCTYPE html><html><body>Please log in to read this paper.</body></html>"
    replay.route(f"/arxiv/pdf/{ARXIV_ID}", Reply(page, 200, {"Content-Type": "text/html; charset=utf-8"}))
    pid = shelf["ids"]["withArxiv"]
    res = fetch(shelf, data_dir, pid)
    assert res.returncode == 1
    assert "arXiv (127.0.0.1:" in res.stderr and "answered with a web page, not a PDF" in res.stderr
    assert "nothing was attached" in res.stderr and "1 failed" in res.stdout
    assert files_of(data_dir, pid) == []
    nothing_kept(data_dir, shelf)


def test_a_redirect_to_a_local_file_is_refused(shelf, replay, data_dir):
    replay.route(f"/arxiv/pdf/{ARXIV_ID}", Reply(b"", 302, {"Location": "file:///etc/passwd"}))
    pid = shelf["ids"]["withArxiv"]
    res = fetch(shelf, data_dir, pid)
    assert res.returncode == 1
    assert "redirected the download to file:///etc/passwd, which is not a web address" in res.stderr
    assert files_of(data_dir, pid) == []
    assert len(replay.requests) == 1  # nothing was asked of anyone after it
    nothing_kept(data_dir, shelf)


def test_a_body_that_does_not_end_is_cut_at_the_cap(shelf, replay, data_dir):
    # a PDF's header, then 64 KB blocks for up to 30 s: the 4 MB cap comes first
    replay.route(f"/arxiv/pdf/{ARXIV_ID}", Reply(b"%PDF-1.5\n", 200, {"Content-Type": "application/pdf"}, endless=30))
    pid = shelf["ids"]["withArxiv"]
    res = fetch(shelf, data_dir, pid)
    assert res.returncode == 1
    assert "sent a file of more than 4 MB, the most Papershelf downloads" in res.stderr
    assert "nothing was kept" in res.stderr
    assert files_of(data_dir, pid) == []
    nothing_kept(data_dir, shelf)


def test_a_body_that_trickles_on_is_cut_at_the_papers_deadline(shelf, replay, data_dir):
    # 1 KB every 0.05 s for up to 30 s: under the cap, past the paper's 3 s
    endless = Reply(b"%PDF-1.5\n", 200, {"Content-Type": "application/pdf"}, trickle=0.05, endless=30)
    replay.route(f"/arxiv/pdf/{ARXIV_ID}", endless)
    pid = shelf["ids"]["withArxiv"]
    res = fetch(shelf, data_dir, pid, PAPERSHELF_FETCH_SECONDS="3")
    assert res.returncode == 1
    assert "Stopped downloading the PDF from arXiv" in res.stderr and "more than 3 s in all" in res.stderr
    assert "Nothing was kept" in res.stderr
    assert files_of(data_dir, pid) == []
    nothing_kept(data_dir, shelf)


def test_a_404_says_there_is_no_pdf_there(shelf, replay, data_dir):
    replay.route(f"/arxiv/pdf/{ARXIV_ID}", Reply(b"not found", 404, {"Content-Type": "text/plain"}))
    pid = shelf["ids"]["withArxiv"]
    res = fetch(shelf, data_dir, pid)
    assert res.returncode == 1
    assert f"has no PDF at {replay.url}/arxiv/pdf/{ARXIV_ID} (HTTP 404)" in res.stderr
    nothing_kept(data_dir, shelf)


def test_a_503_is_waited_out_as_retry_after_asks(shelf, replay, data_dir):
    busy = Reply(b"busy", 503, {"Retry-After": "1", "Content-Type": "text/plain"})
    pdf = Reply(shelf["arxiv_pdf"], 200, {"Content-Type": "application/pdf"})
    replay.route(f"/arxiv/pdf/{ARXIV_ID}", [busy, pdf])
    pid = shelf["ids"]["withArxiv"]
    res = fetch(shelf, data_dir, pid)
    assert res.returncode == 0, res.stdout + res.stderr
    first, second = replay.requests_to(f"/arxiv/pdf/{ARXIV_ID}")
    assert second.time - first.time >= 0.9  # the Retry-After of 1 s was kept
    assert len(files_of(data_dir, pid)) == 1


def test_a_503_that_keeps_on_fails_in_words(shelf, replay, data_dir):
    replay.route(f"/arxiv/pdf/{ARXIV_ID}", Reply(b"busy", 503, {"Retry-After": "0", "Content-Type": "text/plain"}))
    pid = shelf["ids"]["withArxiv"]
    res = fetch(shelf, data_dir, pid)
    assert res.returncode == 1
    assert "asked us to slow down (HTTP 503)" in res.stderr and "try again" in res.stderr
    assert len(replay.requests) == 4  # the first try and 3 retries
    nothing_kept(data_dir, shelf)


def test_the_command_needs_ids_or_all_missing(data_dir):
    res = run_cli("fetch-pdf", data_dir=data_dir)
    assert res.returncode == 2 and "--all-missing" in res.stderr


def test_ctrl_c_stops_a_download_cleanly(shelf, replay, data_dir):
    endless = Reply(b"%PDF-1.5\n", 200, {"Content-Type": "application/pdf"}, trickle=0.05, endless=60)
    replay.route(f"/arxiv/pdf/{ARXIV_ID}", endless)
    pid = shelf["ids"]["withArxiv"]
    cmd = [sys.executable, "-m", "papershelf", "--data-dir", str(data_dir), "fetch-pdf", pid]
    proc = subprocess.Popen(
        cmd, env={**os.environ, **shelf["env"]}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while not replay.requests_to(f"/arxiv/pdf/{ARXIV_ID}") and time.monotonic() < deadline:
            time.sleep(0.05)  # polling the server's record of requests: the download has begun
        assert replay.requests_to(f"/arxiv/pdf/{ARXIV_ID}"), "the download never began"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert "0 PDFs attached" in out
    assert files_of(data_dir, pid) == []
    nothing_kept(data_dir, shelf)


def test_a_body_that_starts_as_a_pdf_but_is_not_one_is_refused(shelf, replay, data_dir):
    """The review's case: "%PDF-1.4" then a login page, with status 200. The magic bytes pass, but
    the reader cannot open it: nothing is attached, it counts as failed, and a later
    --all-missing still sees the paper as missing its PDF."""
    fake = b"%PDF-1.4\n<!DOCTYPE html><html><body>Please log in.</body></html>\n"
    replay.route(f"/arxiv/pdf/{ARXIV_ID}", Reply(fake, 200, {"Content-Type": "application/pdf"}))
    pid = shelf["ids"]["withArxiv"]
    res = fetch(shelf, data_dir, pid)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "not a readable PDF" in res.stderr and "not attached" in res.stderr and "1 failed" in res.stdout
    assert files_of(data_dir, pid) == []
    nothing_kept(data_dir, shelf)


def test_a_library_another_papershelf_holds_is_said_before_anything_is_downloaded(shelf, replay, data_dir):
    replay.route(f"/arxiv/pdf/{ARXIV_ID}", Reply(shelf["arxiv_pdf"], 200, {"Content-Type": "application/pdf"}))
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from papershelf.core.library import Library; "
         "lib = Library.open(sys.argv[1]); print('open', flush=True); sys.stdin.read()", str(data_dir)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "open"
        res = fetch(shelf, data_dir, shelf["ids"]["withArxiv"])
        assert res.returncode != 0 and "open in another Papershelf" in res.stderr
        assert replay.requests == []  # nothing was downloaded for nothing
    finally:
        holder.stdin.close()
        holder.wait(30)
        holder.stdout.close()
