"""Export benchmark (issue 25 items 3 and 4): ``papershelf export`` of a whole library as a process.

Not a pytest test; run it by hand::

    python tests/perf/bench_export.py --library /work/corpus/lib100k --base /tmp/old-checkout
    python tests/perf/bench_export.py --size 10000              # a synthetic library (bench_store's corpus)

The library is copied into a temporary folder with its own per-user folders (XDG_*), and one
export pins every paper's citation key first (not measured: the first export of a library writes a
key into every record). Then, each run a fresh ``papershelf export`` process, wall time and peak
RSS (the child's own, from wait4):

* the anchor: the code in ``--base`` (an older checkout, run with its ``app/`` first on the path),
  the same export, when given;
* cold: the rendered-entry cache (``exports.sqlite3`` in this machine's folder for the library)
  removed first, so every entry is rendered, then kept;
* warm: the entries copied from the cache;
* streamed: ``-o -`` into a pipe read and dropped here (memory must not grow with the library);
* RIS, warm; and, after ``papershelf tag`` edits one paper, the export that renders it alone.

Every output is compared byte for byte with the anchor's (or, without one, with the cold export's):
a difference is printed as FAILED and ends the run with status 1. Targets: the export of the
whole library <= 2 s (item 3) and streamed within 1 s (item 4), printed as PASS/MISS (a miss
never changes the exit status).
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]

from bench_store import describe_commit, mark, print_footer, write_corpus

TARGET_S = 2.0  # item 3: export of 100,000 papers
STREAM_TARGET_S = 1.0  # item 4: export streams within 1 s


def run(env: dict, *args: str, stdout=subprocess.DEVNULL) -> tuple[float, float, float]:
    """One `papershelf ARGS` process: (wall seconds, its peak RSS in MB, its CPU seconds: user and
    system); raises if it fails."""
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "papershelf", *args], env=env, stdout=stdout, stderr=subprocess.PIPE)
    if stdout is subprocess.PIPE:
        assert proc.stdout is not None
        while proc.stdout.read(1 << 20):  # read and dropped: a consumer of the stream
            pass
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"papershelf {' '.join(args)} failed ({proc.returncode}): {err.decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def environment(folder: Path, app: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(app)}
    for name in ("DATA", "CACHE", "STATE", "CONFIG"):
        env[f"XDG_{name}_HOME"] = str(folder / "xdg" / name.lower())
    return env


def prepare(folder: Path, library: str | None, size: int, seed: int) -> Path:
    lib = folder / "lib"
    if library:
        shutil.copytree(library, lib)
        return lib
    files = write_corpus(size, folder / "listings", seed)
    env = environment(folder, ROOT / "app")
    subprocess.run(
        [sys.executable, "-m", "papershelf", "--data-dir", str(lib), "import", *map(str, files)],
        env=env,
        check=True,
        capture_output=True,
    )
    return lib


def caches(folder: Path) -> list[Path]:
    return list((folder / "xdg").rglob("exports.sqlite3*"))


def figures(name: str, runs: list[tuple[float, float, float]], target: float | None = None) -> float:
    walls, cpus = [r[0] for r in runs], [r[2] for r in runs]
    best, median = min(walls), statistics.median(walls)
    said = f"  {name:<34} min {best:6.2f} s, median {median:6.2f} s, peak {max(r[1] for r in runs):5.0f} MB"
    said += f", CPU min {min(cpus):5.2f} s, median {statistics.median(cpus):5.2f} s"
    if target is not None:
        said += f"  [{mark(median <= target)} <= {target:.0f} s]"
    print(said, flush=True)
    return median


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--library", help="a library folder to copy (default: a synthetic one of --size papers)")
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1729)
    ap.add_argument("--base", help="an older checkout to measure the same exports with (the anchor)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tmpdir", default=None)
    args = ap.parse_args(argv)
    commit = describe_commit()
    t0 = time.perf_counter()
    print(f"papershelf export benchmark: commit {commit}, python {sys.version.split()[0]}, {os.cpu_count()} CPU(s)")
    folder = Path(tempfile.mkdtemp(prefix="papershelf-bench-export-", dir=args.tmpdir))
    failed = False
    try:
        lib = prepare(folder, args.library, args.size, args.seed)
        new = environment(folder, ROOT / "app")
        old = environment(folder, Path(args.base) / "app") if args.base else None
        out = folder / "out"
        out.mkdir()

        def export(env: dict, name: str, *extra: str) -> tuple[float, float, float]:
            return run(env, "--data-dir", str(lib), "export", "--force", "-o", str(out / name), *extra)

        first = export(new, "pin.bib")
        what = args.library or f"synthetic, {args.size:,} papers"
        print(f"library {what}; first export (pins every key, not measured): {first[0]:.1f} s, {first[1]:.0f} MB")
        print(f"load average at the start: {os.getloadavg()}")
        rows: dict[str, list[tuple[float, float, float]]] = {
            k: [] for k in ("base", "cold", "warm", "stream", "base_stream")
        }
        for _ in range(args.runs):
            if old is not None:
                rows["base"].append(export(old, "base.bib"))
                rows["base_stream"].append(
                    run(old, "--data-dir", str(lib), "export", "-o", "-", stdout=subprocess.PIPE)
                )
            for path in caches(folder):
                path.unlink()
            rows["cold"].append(export(new, "cold.bib"))
            rows["warm"].append(export(new, "warm.bib"))
            rows["stream"].append(run(new, "--data-dir", str(lib), "export", "-o", "-", stdout=subprocess.PIPE))
        reference = out / ("base.bib" if old is not None else "cold.bib")
        print(f"BibTeX, the whole library ({reference.stat().st_size / 1e6:.0f} MB), {args.runs} runs each:")
        if old is not None:
            base = figures("anchor (--base), to a file", rows["base"])
            figures("anchor (--base), -o - into a pipe", rows["base_stream"])
        cold = figures("cold cache (every entry rendered)", rows["cold"], TARGET_S)
        warm = figures("warm cache, to a file", rows["warm"], TARGET_S)
        stream = figures("warm cache, -o - into a pipe", rows["stream"], STREAM_TARGET_S)
        ris_new = [export(new, "warm.ris") for _ in range(args.runs)]
        ris_old = [export(old, "base.ris") for _ in range(args.runs)] if old is not None else []
        print("RIS, the whole library:")
        if ris_old:
            figures("anchor (--base)", ris_old)
        figures("warm cache", ris_new, TARGET_S)
        some = subprocess.run(
            [sys.executable, "-m", "papershelf", "--data-dir", str(lib), "list", "--json"],
            env=new,
            capture_output=True,
            text=True,
        )
        pid = json.loads(some.stdout)[0]["id"] if some.returncode == 0 and some.stdout.strip() else None
        if pid:
            run(new, "--data-dir", str(lib), "tag", "--add", "bench-edited", pid)
            edited = export(new, "edited.bib")
            said = f"{edited[0]:.2f} s, {edited[1]:.0f} MB, CPU {edited[2]:.2f} s"
            print(f"  after tagging one paper (it alone rendered): {said}")
            for path in caches(folder):
                path.unlink()
            export(new, "edited-cold.bib")
            same = filecmp.cmp(out / "edited.bib", out / "edited-cold.bib", shallow=False)
            print(f"  the export after the edit equals a cold one: {'yes' if same else 'FAILED'}")
            failed |= not same
            if old is not None:
                export(old, "edited-base.bib")
                same = filecmp.cmp(out / "edited.bib", out / "edited-base.bib", shallow=False)
                print(f"  and the anchor's: {'yes' if same else 'FAILED'}")
                failed |= not same
        for name in ("cold.bib", "warm.bib"):
            same = filecmp.cmp(reference, out / name, shallow=False)
            print(f"  {name} byte-identical to {reference.name}: {'yes' if same else 'FAILED'}")
            failed |= not same
        if old is not None:
            same = filecmp.cmp(out / "base.ris", out / "warm.ris", shallow=False)
            print(f"  warm.ris byte-identical to base.ris: {'yes' if same else 'FAILED'}")
            failed |= not same
        print()
        anchor = f"; anchor {base:.2f} s, x{base / warm:.1f}" if old is not None else ""
        print(
            f"summary: export of the whole library, warm {warm:.2f} s [{mark(warm <= TARGET_S)} <= {TARGET_S:.0f} s],"
            f" cold {cold:.2f} s, streamed {stream:.2f} s [{mark(stream <= STREAM_TARGET_S)} <= "
            f"{STREAM_TARGET_S:.0f} s]{anchor}"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print_footer(commit, t0)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
