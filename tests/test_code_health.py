"""The habits that keep the code in shape (issue 12), run with the rest of the tests.

Each test runs one tool as `.ci/run` and the README's test command would, from the
repository root with the configuration in pyproject.toml, and fails with the tool's
output: ruff (lint, and the formatting check), mypy (strict on the core) and
import-linter (the layers: the GUI and the CLI reach the data only through the
Library facade, search never imports the facade, the core never imports Qt).
The tools come with the `test` extra. Nothing is written into the repository:
the caches go to a temporary folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# a failure shows this many lines of the tool's output from its start, and its last lines
HEAD_LINES, TAIL_LINES = 200, 20


def _tool(module: str, script: str) -> list[str]:
    """The command that runs a tool of the test extra with this interpreter's environment."""
    try:
        __import__(module)
    except ImportError:
        pytest.fail(f"{script} is not installed; install the test extra: pip install -e '.[test]'")
    if module == "importlinter":
        # import-linter has no `python -m` entry point; its script sits beside the interpreter
        found = Path(sys.executable).with_name(script)
        path = str(found) if found.exists() else shutil.which(script)
        if path is None:
            pytest.fail(f"{script} is not on the PATH; install the test extra: pip install -e '.[test]'")
        return [path]
    return [sys.executable, "-m", module]


def _run(command: list[str], tmp_path: Path) -> None:
    """Run `command` in the repository root; fail with its output unless it exits 0."""
    env = dict(os.environ)
    # this tree's code, whatever an installed copy of papershelf points at
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "app"), env.get("PYTHONPATH")]))
    env["MYPY_CACHE_DIR"] = str(tmp_path / "mypy-cache")
    env["RUFF_CACHE_DIR"] = str(tmp_path / "ruff-cache")
    env.setdefault("NO_COLOR", "1")
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        lines = (done.stdout + done.stderr).splitlines()
        if len(lines) > HEAD_LINES + TAIL_LINES:
            cut = len(lines) - HEAD_LINES - TAIL_LINES
            lines = [*lines[:HEAD_LINES], f"[… {cut} more lines …]", *lines[-TAIL_LINES:]]
        shown = " ".join(Path(part).name if os.sep in part else part for part in command)
        pytest.fail(f"`{shown}` failed (exit {done.returncode}):\n" + "\n".join(lines), pytrace=False)


def test_ruff_lint(tmp_path: Path) -> None:
    _run([*_tool("ruff", "ruff"), "check", "--output-format", "concise", "."], tmp_path)


def test_ruff_format(tmp_path: Path) -> None:
    _run([*_tool("ruff", "ruff"), "format", "--diff", "."], tmp_path)


@pytest.mark.slow
def test_mypy(tmp_path: Path) -> None:
    _run([*_tool("mypy", "mypy"), "--no-pretty", "--show-error-codes"], tmp_path)


def test_import_layers(tmp_path: Path) -> None:
    _run([*_tool("importlinter", "lint-imports"), "--no-cache"], tmp_path)
