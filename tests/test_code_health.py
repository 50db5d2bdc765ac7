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
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT / "app"), str(ROOT / "tests" / "contracts"), env.get("PYTHONPATH")])
    )
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


# ---- issue 23: one home for each rule ----

APP = ROOT / "app" / "papershelf"
# radon's cyclomatic complexity: mccabe's count plus each `and`/`or` and comprehension, the
# figure the review measured (record_edit.field_changes was 88). Over this, a function
# is split into named stages. Ruff's C901 (mccabe) runs with the same limit in test_ruff_lint.
MAX_COMPLEXITY = 25


def _modules() -> dict[str, Path]:
    """Every module of the app by its dotted name."""
    found = {}
    for path in sorted(APP.rglob("*.py")):
        parts = list(path.relative_to(ROOT / "app").with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports_from(module: str, path: Path) -> list[tuple[str, str, int]]:
    """(the module imported from, the name, the line) of each `from x import name` in a module."""
    import ast

    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = module.split(".")
            base = base[: len(base) - node.level + (1 if is_package else 0)]
            source = ".".join([*base, node.module] if node.module else base)
        else:
            source = node.module or ""
        found.extend((source, alias.name, node.lineno) for alias in node.names)
    return found


def test_no_function_is_more_complex_than_the_limit() -> None:
    try:
        from radon.complexity import cc_visit
    except ImportError:
        pytest.fail("radon is not installed; install the test extra: pip install -e '.[test]'")
    too_complex = []
    for module, path in _modules().items():
        for block in cc_visit(path.read_text(encoding="utf-8")):
            for function in [block, *getattr(block, "methods", [])]:
                if function.complexity > MAX_COMPLEXITY and not hasattr(function, "methods"):
                    name = f"{function.classname}.{function.name}" if function.classname else function.name
                    too_complex.append(f"{module}.{name} (line {function.lineno}): {function.complexity}")
    assert not too_complex, (
        f"split these into named stages (radon cyclomatic complexity over {MAX_COMPLEXITY}):\n"
        + "\n".join(sorted(set(too_complex)))
    )


def test_no_private_name_is_imported_from_another_module() -> None:
    modules = _modules()
    leaks = [
        f"{module} (line {line}) imports {name} from {source}"
        for module, path in modules.items()
        for source, name, line in _imports_from(module, path)
        if source in modules and name.startswith("_") and not name.startswith("__")
    ]
    assert not leaks, "a private name has one user, its own module; make it public in its one home:\n" + "\n".join(
        leaks
    )


def test_the_gui_and_the_cli_import_only_the_facades_public_names() -> None:
    """The import contract lets the GUI and the CLI import `papershelf.core.library`; this holds
    them to the names its `__init__` exports (`__all__`)."""
    import papershelf.core.library as facade

    public = set(facade.__all__)
    modules = _modules()
    leaks = [
        f"{module} (line {line}) imports {name}"
        for module, path in modules.items()
        if module.startswith(("papershelf.gui", "papershelf.cli"))
        for source, name, line in _imports_from(module, path)
        if source == "papershelf.core.library" and name not in public
    ]
    assert not leaks, "export these from core/library/__init__.py (__all__) or do without:\n" + "\n".join(leaks)
