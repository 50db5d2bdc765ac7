"""Generated bad arguments for every command: a message and exit 0/1/2, never a traceback.

The CLI runs in-process (`papershelf.cli.main(argv)`, its standard streams
replaced) for speed; test_first_minutes.py runs a few of the same cases as
subprocesses.
"""

from __future__ import annotations

import io
import os
import sys
import traceback
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import SEEDS
from papershelf import cli
from papershelf.core.library import Library


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzz")
    with Library.open(base / "library") as lib:
        lib.import_files(SEEDS[:1])
        ids = lib.ids()
        lib.add_tags(ids[:2], ["to-read"])
        lib.add_to_list("Thesis", ids[:2])
    return base


@contextmanager
def _streams(stdin: bytes = b""):
    """Standard streams as Python sets them up: stdout strict UTF-8, stderr backslashreplace."""
    saved = sys.stdin, sys.stdout, sys.stderr
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout, sys.stderr = out, err
    try:
        yield out, err
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


# what people mistype: blanks, dashes, odd Unicode, numbers out of range, and
# the surrogates Python makes of a file name's undecodable bytes
_odd = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=12)
_junk = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "   ",
            "-",
            "--",
            "-x",
            "0",
            "7",
            "-1",
            "1e9",
            "99999999999999999999",
            "read",
            "raed",
            "to-read",
            "Thesis",
            "thesis ",
            "tag:",
            '"',
            "*",
            "~",
            "NOT",
            "\udce9",
            "caf\udce9",
            "\u200b",
            "\ufeff",
            "Ω",
            "llm,,",
            ",",
            "x" * 300,
        ]
    ),
    _odd,
)

_OPTIONS = {
    "import": ["--samples", "--as", "listing", "--keywords-as-tags", "--online", "--mailto"],
    "list": ["--json", "--status", "--tag", "--list", "--area", "--sort", "read", "--reverse"],
    "show": ["--json", "--bibtex", "--dialect"],
    "tag": ["--add", "--remove"],
    "tags": ["--delete", "--rename", "--drop-keyword-tags"],
    "status": [],
    "note": [],
    "title": [],
    "key": [],
    "rate": [],
    "search": ["--json", "--limit", "--status", "--tag", "--list", "--area", "--sort", "--saved"],
    "suggest": ["--tag", "--list", "--limit", "--json"],
    "reindex": [],
    "export": ["--tag", "--list", "--status", "--query", "--ids", "--dialect", "--format", "ris", "--saved", "--files"],
    "lists": [],
    "list-add": [],
    "list-remove": [],
    "recover": [],
    "duplicates": ["--json", "--merge", "--keep-apart"],
    "set": ["--type", "year=", "author=", "title=", "citekey=", "doi=", "eprint=", "month=", "pages="],
    # online: every service is a closed port in the tests (conftest.py), as a machine offline
    "add": ["--mailto", "arXiv:1605.08386", "10.1073/pnas.1414271111"],
    "lookup": ["--derived", "--apply", "--accept", "--json", "--mailto"],
    "delete": ["--yes"],
    "searches": ["--save", "--rename", "--delete", "--status", "--tag", "--list", "--area"],
    "devices": [],
    "conflicts": ["--json", "--take", "--dismiss"],
    "undo": ["--list"],
    "redo": [],
    # a paper's files (issue 24): the fuzz library's papers have none, so `open` never starts a viewer
    "attach": ["--link", "--label"],
    "detach": [],
    "files": [],
    "open": [],
    "fetch-pdf": ["--all-missing"],
}
assert set(_OPTIONS) == set(cli.COMMANDS)


@st.composite
def _argv(draw, ids, out_paths):
    command = draw(st.sampled_from(sorted(_OPTIONS)))
    token = st.one_of(
        _junk,
        st.sampled_from(ids),
        st.sampled_from([i[:3] for i in ids]),
        st.sampled_from(_OPTIONS[command] or ["--json"]),
    )
    good_ids = st.lists(st.sampled_from(ids + [i[:3] for i in ids]), min_size=1, max_size=2)
    shaped = {  # the command's own shape with one bad part, which finds more than free-form lists
        "list-add": st.tuples(_junk, good_ids),
        "list-remove": st.tuples(_junk, good_ids),
        "tag": st.tuples(good_ids, st.sampled_from(["--add", "--remove"]), _junk),
        "tags": st.tuples(st.sampled_from(["--delete", "--rename"]), _junk, _junk),
        "searches": st.tuples(st.sampled_from(["--save", "--rename", "--delete"]), _junk, _junk),
        "status": st.tuples(good_ids, _junk),
        "rate": st.tuples(good_ids, _junk),
        "note": st.tuples(good_ids.map(lambda x: x[:1]), _junk),
        "title": st.tuples(good_ids.map(lambda x: x[:1]), _junk),
        "key": st.tuples(good_ids.map(lambda x: x[:1]), _junk),
        "set": st.tuples(
            good_ids.map(lambda x: x[:1]),
            st.tuples(st.sampled_from(_OPTIONS["set"][1:]), _junk).map("".join),
        ),
    }.get(command)
    free = st.lists(token, max_size=5)
    parts = draw(st.one_of(free, shaped) if shaped is not None else free)
    args = [command] + [a for part in parts for a in ([part] if isinstance(part, str) else part)]
    if command == "export":  # never write outside the test's folder
        args += ["-o", draw(st.sampled_from(out_paths))]
    if command == "import":  # only "-" (standard input) or names that do not exist
        args = [a if a == "-" or a.startswith("-") or not os.path.exists(a) else "missing" for a in args]
    return args


def test_generated_bad_arguments_never_give_a_traceback(folder, monkeypatch):
    monkeypatch.setenv("PAPERSHELF_RATE_SCALE", "0.001")  # `add` and `lookup` meet closed ports, not waits
    lib_dir = folder / "library"
    with Library.open(lib_dir, readonly=True) as lib:
        ids = lib.ids()
    out_paths = ["-", str(folder / "out.bib"), str(folder / "no" / "such" / "dir.bib"), str(folder)]
    here = os.getcwd()
    os.chdir(folder)  # relative names the generator makes resolve here
    try:
        _run(lib_dir, ids, out_paths)
    finally:
        os.chdir(here)


def _run(lib_dir, ids, out_paths):
    @settings(
        max_examples=int(os.environ.get("PAPERSHELF_FUZZ", "150")),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(argv=_argv(ids, out_paths), stdin=st.sampled_from([b"", b"   \n", SEEDS[0].read_bytes()[:400]]))
    def check(argv, stdin):
        full = ["--data-dir", str(lib_dir)] + argv
        with _streams(stdin) as (out, err):
            try:
                code = cli.main(full)
            except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
                code = exc.code
            except BaseException:
                pytest.fail(f"papershelf {full!r} raised:\n{traceback.format_exc()}")
            out.flush()
            err.flush()
            stderr = err.buffer.getvalue().decode("utf-8")
            stdout = out.buffer.getvalue().decode("utf-8")
        assert code in (0, 1, 2), (full, code, stderr)
        assert "Traceback" not in stderr, (full, stderr)
        if code:
            assert (stderr + stdout).strip(), f"papershelf {full!r} exited {code} without saying why"

    check()
