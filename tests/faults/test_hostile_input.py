"""Hostile input, in CI-sized loops (issue 21): generated @string macro bombs of several
shapes, and control characters injected at random into .bib, .ris and listing files, each
imported by `papershelf import` in a real subprocess under a memory cap. Counts printed at
the end of each test, as tests/faults/test_faults.py does.

A larger run by hand: ``PAPERSHELF_FAULTS=10 python -m pytest tests/faults/test_hostile_input.py -s``
(loop sizes multiplied; ``PAPERSHELF_FAULT_SEED`` picks another random sequence).

Each run must end with the import finished (exit 0, or 1 for a file refused whole, with words),
no traceback, the papers that were in the library still there, the file's ordinary entry
imported beside the hostile one (a bomb refuses only what uses it), and no control character
stored anywhere in the library.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from papershelf.core import limits
from papershelf.core.library import Library

SCALE = max(1, int(os.environ.get("PAPERSHELF_FAULTS", "1")))
SEED = int(os.environ.get("PAPERSHELF_FAULT_SEED", "21"))
MEMORY_CAP = 1_500_000_000  # bytes of address space for each import (the bombs needed 5.6 GB)

pytestmark = pytest.mark.slow

FINE = "@article{fine, title = {A perfectly ordinary paper}, author = {Fine, Bob}, year = 2021}\n"


def report(capsys, title: str, counts: dict) -> None:
    with capsys.disabled():
        print(f"\n[faults x{SCALE}] {title}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))


def finish(capsys, title: str, counts, failures: list[str]) -> None:
    """Print a campaign's counts (failures among them), then fail with every failure's story."""
    counts["failed"] = len(failures)
    report(capsys, title, counts)
    assert not failures, "\n\n".join(failures)


def capped_import(path: Path, data_dir: Path) -> subprocess.CompletedProcess:
    cmd = ["prlimit", f"--as={MEMORY_CAP}", sys.executable, "-m", "papershelf", "--data-dir", str(data_dir)]
    return subprocess.run([*cmd, "import", str(path)], capture_output=True, text=True, timeout=300)


def _titles(data_dir: Path) -> list[str]:
    with Library.open(data_dir, readonly=True) as lib:
        return [p.title for p in lib.papers()]


def _no_controls_stored(data_dir: Path) -> bool:
    for f in data_dir.rglob("*"):
        if f.is_file() and f.suffix in (".jsonl", ".json", ".last"):
            text = f.read_text(encoding="utf-8", errors="replace")
            if limits.has_controls(text.replace("\t", " ")):
                return False
            if re.search(r"\\u00(?:[01][0-9a-f]|7f|[89][0-9a-f])", text, re.I):
                return False
    return True


@pytest.fixture
def base_library(tmp_path) -> Path:
    """A library already holding one paper, which every hostile import must leave there."""
    folder = tmp_path / "library"
    seed = tmp_path / "seed.bib"
    seed.write_text("@article{kept, title = {Kept from before}, author = {Kept, Kim}, year = 2019}\n")
    assert capped_import(seed, folder).returncode == 0
    return folder


# ---- macro bombs ---------------------------------------------------------------------


def doubling(rng: random.Random) -> str:
    """The issue's shape: each macro twice the one before (a base of 1-50 characters)."""
    depth = rng.randint(18, 40)
    lines = [f"@string{{s0 = {{{'x' * rng.randint(1, 50)}}}}}"]
    lines += [f"@string{{s{i} = s{i - 1} # s{i - 1}}}" for i in range(1, depth + 1)]
    return "\n".join(lines) + f"\n@article{{bomb, title = s{depth}, year = 2020}}\n"


def fan_out(rng: random.Random) -> str:
    """Each macro many copies of the one before: few levels, a wide tree."""
    width, depth = rng.randint(10, 1000), rng.randint(3, 6)
    lines = [f"@string{{w0 = {{{'y' * rng.randint(100, 1000)}}}}}"]
    lines += [f"@string{{w{i} = " + " # ".join([f"w{i - 1}"] * width) + "}" for i in range(1, depth + 1)]
    return "\n".join(lines) + f"\n@misc{{bomb, note = w{depth}, title = {{Fan}}}}\n"


def redefined(rng: random.Random) -> str:
    """One macro defined again and again as itself twice (the earlier value is used)."""
    n = rng.randint(20, 60)
    return '@string{a = "ab"}\n' + "@string{a = a # a}\n" * n + "@article{bomb, title = a, year = 2020}\n"


def cycle(rng: random.Random) -> str:
    """Macros naming each other (and themselves) before they are defined: no loop, nothing grows."""
    names = [f"c{i}" for i in range(rng.randint(2, 30))]
    lines = [f"@string{{{a} = {b} # {a}}}" for a, b in zip(names, names[1:] + names[:1], strict=True)]
    return "\n".join(lines) + f"\n@article{{cyc, title = {names[0]} # {{ cycle}}, year = 2020}}\n"


def many_users(rng: random.Random) -> str:
    """A macro under the limit for one value, put into many entries (the limit for one file)."""
    depth = rng.randint(14, 16)
    lines = ['@string{m0 = "zz"}', *(f"@string{{m{i} = m{i - 1} # m{i - 1}}}" for i in range(1, depth + 1))]
    lines += [f"@misc{{u{n}, title = {{User {n}}}, note = m{depth}}}" for n in range(rng.randint(60, 120))]
    return "\n".join(lines) + "\n"


def deep_braces(rng: random.Random) -> str:
    """Braces nested thousands deep, in a title and an abstract."""
    d, a = rng.randint(10, 1999), rng.randint(1000, 60000)
    return f"@article{{deep, title = {{{'{' * d}t{'}' * d}}}, abstract = {{{'{' * a}a{'}' * a}}}, year = 2020}}\n"


def long_concatenation(rng: random.Random) -> str:
    """One field a concatenation of a hundred thousand macros."""
    n = rng.randint(50_000, 200_000)
    return "@string{k = {0123456789}}\n@article{cat, title = " + " # ".join(["k"] * n) + ", year = 2020}\n"


BOMBS: dict[str, Callable[[random.Random], str]] = {
    "doubling": doubling,
    "fan-out": fan_out,
    "redefined": redefined,
    "cycle": cycle,
    "many users": many_users,
    "deep braces": deep_braces,
    "long concatenation": long_concatenation,
}


def test_macro_bombs_never_exhaust_memory_and_the_rest_imports(tmp_path, base_library, capsys):
    rng = random.Random(SEED)
    counts: Counter[str] = Counter()
    failures: list[str] = []
    runs = 2 * SCALE
    for n in range(runs * len(BOMBS)):
        shape = list(BOMBS)[n % len(BOMBS)]
        data_dir = tmp_path / f"lib{n}"
        subprocess.run(["cp", "-a", str(base_library), str(data_dir)], check=True)
        bib = tmp_path / f"bomb{n}.bib"
        bib.write_text(BOMBS[shape](rng) + FINE, encoding="utf-8")
        res = capped_import(bib, data_dir)
        titles = _titles(data_dir)
        ok = (
            res.returncode == 0
            and "Traceback" not in res.stderr
            and "MemoryError" not in res.stdout + res.stderr
            and "Kept from before" in titles
            and "A perfectly ordinary paper" in titles
        )
        counts["runs"] += 1
        counts["refused with words"] += "not imported" in res.stdout or "not defined" in res.stdout
        if not ok:
            failures.append(f"{shape} (run {n}): exit {res.returncode}\n{res.stdout[-500:]}\n{res.stderr[-2000:]}")
        bib.unlink()
    finish(capsys, "macro bombs", counts, failures)


# ---- control characters ----------------------------------------------------------------

# what an attacker puts in: NUL aside (a file with NUL is refused whole as binary, with words)
INJECTIONS = ["\x1b]0;pwned\x07", "\x1b]8;;http://evil/\x1b\\", "\x1b[2J", "\x1b[31m", "\x9b1m", "\x07", "\r", "\x08"]
INJECTIONS_ANYWHERE = [*INJECTIONS, "\x00", "\x7f", "\x85"]


def _inject(rng: random.Random, text: str, choices: list[str]) -> str:
    return "".join(rng.choice(choices) + ch if rng.random() < 0.05 else ch for ch in text)


def _bib(rng: random.Random) -> str:
    title = _inject(rng, "On the hostility of reference files", INJECTIONS)
    author = _inject(rng, "Mallory, Eve and Fine, Bob", INJECTIONS)
    note = _inject(rng, "A note for the reader", INJECTIONS_ANYWHERE)
    return f"@article{{esc, title = {{{title}}}, author = {{{author}}}, note = {{{note}}}, year = 2020}}\n" + FINE


def _ris(rng: random.Random) -> str:
    title = _inject(rng, "On the hostility of reference files", INJECTIONS)
    abstract = _inject(rng, "An abstract that reads like one, with a few words in it.", INJECTIONS)
    return (
        f"TY  - JOUR\nTI  - {title}\nAU  - Mallory, Eve\nPY  - 2020\nAB  - {abstract}\nER  - \n"
        "TY  - JOUR\nTI  - A perfectly ordinary paper\nAU  - Fine, Bob\nPY  - 2021\nER  - \n"
    )


def _listing(rng: random.Random) -> str:
    abstract = _inject(
        rng,
        "We study how terminal escape sequences hidden in an abstract could rewrite the screen of "
        "whoever lists the papers, and we show that removing them on the way in is enough.",
        INJECTIONS,
    )
    return f"论文检索\n\nEve Mallory, Bob Fine\n{abstract}\n"


FORMATS: dict[str, Callable[[random.Random], str]] = {".bib": _bib, ".ris": _ris, ".txt": _listing}


def test_control_characters_are_never_stored(tmp_path, base_library, capsys):
    rng = random.Random(SEED)
    counts: Counter[str] = Counter()
    failures: list[str] = []
    for n in range(6 * SCALE * len(FORMATS)):
        suffix = list(FORMATS)[n % len(FORMATS)]
        data_dir = tmp_path / f"lib{n}"
        subprocess.run(["cp", "-a", str(base_library), str(data_dir)], check=True)
        path = tmp_path / f"hostile{n}{suffix}"
        path.write_text(FORMATS[suffix](rng), encoding="utf-8")
        res = capped_import(path, data_dir)
        titles = _titles(data_dir)
        refused_whole = res.returncode == 1 and "binary file" in res.stdout + res.stderr
        ok = (
            (res.returncode == 0 or refused_whole)
            and "Traceback" not in res.stderr
            and "Kept from before" in titles
            and _no_controls_stored(data_dir)
        )
        counts["runs"] += 1
        counts["imported, told"] += res.returncode == 0 and "control characters" in res.stdout
        counts["refused whole (NUL)"] += refused_whole
        if not ok:
            failures.append(f"{suffix} (run {n}): exit {res.returncode}\n{res.stdout[-800:]}\n{res.stderr[-2000:]}")
        path.unlink()
    finish(capsys, "control characters", counts, failures)
