"""The fault campaign's control-character attack (issue 21): records stored with random control
characters in every field (as a version that kept them did), then every printing command and every
export, through the installed command. Counted, never assumed: any control character in what the
terminal or an export gets fails the test. ``PAPERSHELF_FAULTS=10`` multiplies the loop."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from papershelf.core.paper import Paper
from papershelf.core.store.journal import Op
from papershelf.core.store.store import Store

SCALE = max(1, int(os.environ.get("PAPERSHELF_FAULTS", "1")))
pytestmark = pytest.mark.slow

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
OWN_RETURN = re.compile("\r(?=Index|looking up|The search index)")
# what terminals act on, and single controls of every range
SEQUENCES = [
    "\x1b]0;title\x07",
    "\x1b]8;;http://evil.example/\x1b\\",
    "\x1b[2J",
    "\x1b[31m",
    "\x1bP+q\x1b\\",
    "\x9b6n",
    "\x9d0;x\x9c",
    "\x00",
    "\r",
    "\x08\x08",
    "\x7f",
    "\x1b",
    "\x85",
    "\x0c",
]


def hostile(rng: random.Random, text: str) -> str:
    """`text` with 1-4 control sequences put in at random places."""
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(text))
        text = text[:at] + rng.choice(SEQUENCES + [chr(rng.choice([*range(0x20), *range(0x7F, 0xA0)]))]) + text[at:]
    return text


def papers(rng: random.Random, n: int) -> list[Paper]:
    out = []
    for i in range(n):
        words = rng.sample(["graph", "neural", "quantum", "message", "passing", "diffusion", "model", "sparse"], 4)
        title = " ".join(words).capitalize()
        bib = rng.random() < 0.5
        out.append(
            Paper(
                f"f{i:07x}",
                title=hostile(rng, title),
                authors=[hostile(rng, "Doe, Jane"), hostile(rng, "Roe, R.")],
                abstract=hostile(rng, f"We study {' '.join(words)} in depth, with results."),
                venue=hostile(rng, "Proc. Evil Conf."),
                year=2000 + i % 25,
                tags=[hostile(rng, "t") if rng.random() < 0.5 else "fuzz", "fuzz"],
                notes=hostile(rng, "a note"),
                links=[hostile(rng, f"https://example.org/{i}")],
                entrytype="article" if bib else "",
                bibfields={"title": "{" + hostile(rng, title) + "}", "journal": "{" + hostile(rng, "J") + "}"}
                if bib
                else {},
                sources=[{"file": "old.bib", "line": i + 1, "format": "bibtex" if bib else "listing"}],
            )
        )
    return out


def run(folder: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "papershelf", "--data-dir", str(folder), *args]
    return subprocess.run(cmd, capture_output=True, timeout=300, env=dict(os.environ))


def test_control_characters_never_reach_a_terminal_or_an_export(tmp_path, capsys):
    rng = random.Random(21)
    counts: Counter[str] = Counter()
    for round_ in range(SCALE):
        folder = tmp_path / f"lib{round_}"
        made = papers(rng, 30)
        store = Store(folder).open()
        try:
            store.apply([Op("add", p.id, p) for p in made])
        finally:
            store.close()
        shown = rng.sample(made, 3)
        commands = [
            ("list",),
            ("list", "--json"),
            ("tags",),
            ("search", "graph"),
            ("search", "neural", "--json"),
            ("suggest", "--tag", "fuzz"),
            ("export", "-o", "-"),
            ("export", "--dialect", "biblatex", "-o", "-"),
            ("export", "--format", "ris", "-o", "-"),
            *[("show", p.id) for p in shown],
            *[("show", p.id, "--bibtex") for p in shown],
        ]
        for args in commands:
            res = run(folder, *args)
            counts["commands"] += 1
            for data in (res.stdout, res.stderr):
                text = OWN_RETURN.sub("", data.decode("utf-8"))
                if "ris" in args:
                    text = text.replace("\r\n", "\n")
                found = CONTROL.findall(text)
                counts["control characters out"] += len(found)
                assert not found, f"{args}: {found!r} in {text[:400]!r}"
            assert b"Traceback" not in res.stderr, res.stderr.decode()
        for fmt, name in (("bibtex", "refs.bib"), ("biblatex", "refs-biber.bib"), ("ris", "refs.ris")):
            out = tmp_path / f"{round_}-{name}"
            res = run(folder, "export", "--format", fmt, "-o", str(out))
            assert res.returncode == 0, res.stderr.decode()
            counts["exports"] += 1
            text = out.read_bytes().decode("utf-8").replace("\r\n", "\n")
            assert not CONTROL.findall(text)
    with capsys.disabled():
        print(f"\n[faults x{SCALE}] control characters: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
