"""BibTeX benchmark: export of a large library, import of a large .bib.

Not a pytest test; run it by hand::

    python tests/perf/bench_bibtex.py                 # export 100,000, import 10,000
    python tests/perf/bench_bibtex.py --export 10000 --import 2000

Steps, each in a fresh process: the synthetic corpus of ``bench_store.py``
imported (not measured); ``Library.export_bibtex`` of every paper in both
dialects (keys assigned library-wide, text escaped, file written
atomically; the first export also pins the keys, so it is timed apart
from a second one); then a .bib of N entries (the first N of that export)
imported into an empty library with ``Library.import_files``, and those
papers (with their bibliographic records) exported again in both dialects
(not against a target: printed to compare the record path with the other).

Targets (issue): export of 100,000 papers <= 5 s; import of a
10,000-entry .bib >= 2,000 entries/s. Printed as PASS/MISS.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
# bench_store, beside this script (sys.path[0] when it runs), puts app/ on the path

from bench_store import (
    child_requested,
    describe_commit,
    mark,
    named_children,
    peak_rss_mb,
    print_footer,
    run_script_child,
    write_corpus,
)

TARGET_EXPORT_S = 5.0
TARGET_IMPORT_PPS = 2_000.0


def child_prepare(folder: str, n: int, seed: int) -> dict:
    from papershelf.core.library import Library

    files = write_corpus(n, Path(folder) / "listings", seed)
    with Library.open(Path(folder) / "library") as lib:
        lib.import_files(files)
        return {"papers": len(lib)}


def child_export(folder: str) -> dict:
    from papershelf.core.library import Library

    out = {}
    with Library.open(Path(folder) / "library") as lib:
        for dialect, label in (("bibtex", "first"), ("bibtex", "again"), ("biblatex", "again")):
            target = Path(folder) / f"all-{dialect}.bib"
            t = time.perf_counter()
            report, _ = lib.export_bibtex(lib.ids(), target, dialect)
            out[f"{dialect}-{label}"] = {
                "s": time.perf_counter() - t,
                "entries": report.entries,
                "mb": target.stat().st_size / 2**20,
                "pinned": len(report.new_keys),
            }
    out["peak_mb"] = peak_rss_mb()
    return out


def child_import(folder: str, n: int) -> dict:
    from papershelf.core.library import Library

    text = (Path(folder) / "all-bibtex.bib").read_text(encoding="utf-8")
    head, *entries = text.split("\n@")
    part = Path(folder) / f"part-{n}.bib"
    part.write_text(head + "".join("\n@" + e for e in entries[:n]), encoding="utf-8")
    with Library.open(Path(folder) / "imported") as lib:
        t = time.perf_counter()
        reports = lib.import_files([part])
        seconds = time.perf_counter() - t
        # the imported papers carry their records: their export writes the records' fields
        records = sum(1 for p in lib.papers() if p.entrytype)
        reexport = {}
        for dialect in ("bibtex", "biblatex"):
            t = time.perf_counter()
            lib.export_bibtex(lib.ids(), Path(folder) / f"reexport-{dialect}.bib", dialect)
            reexport[dialect] = time.perf_counter() - t
        return {
            "s": seconds,
            "added": sum(r.added for r in reports),
            "problems": sum(len(r.problems) for r in reports),
            "records": records,
            "reexport": reexport,
            "peak_mb": peak_rss_mb(),
        }


CHILDREN = {"prepare": child_prepare, "export": child_export, "import": child_import}
child_main = named_children(CHILDREN)


def run(name: str, *args) -> dict:
    return run_script_child(HERE, name, *map(str, args), timeout=7200)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if child_requested(argv, child_main):
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--export", type=int, default=100_000, help="papers in the exported library")
    ap.add_argument("--import", dest="import_n", type=int, default=10_000, help="entries in the imported .bib")
    ap.add_argument("--seed", type=int, default=1729)
    ap.add_argument("--tmpdir", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the working folder (about 1 GB for 100,000 papers)")
    args = ap.parse_args(argv)
    commit = describe_commit()
    t0 = time.perf_counter()
    print(f"papershelf BibTeX benchmark: commit {commit}, python {sys.version.split()[0]}, {os.cpu_count()} CPU(s)")
    folder = tempfile.mkdtemp(prefix="papershelf-bench-bibtex-", dir=args.tmpdir)
    prep = run("prepare", folder, max(args.export, args.import_n), args.seed)
    print(f"prepared {prep['papers']:,} papers (not measured)")
    exp = run("export", folder)
    for key in ("bibtex-first", "bibtex-again", "biblatex-again"):
        e = exp[key]
        print(
            f"  export {key:15} {e['entries']:,} entries in {e['s']:.2f} s ({e['entries'] / e['s']:,.0f}/s), "
            f"{e['mb']:.0f} MB, keys pinned {e['pinned']:,}"
        )
    imp = run("import", folder, args.import_n)
    pps = imp["added"] / imp["s"]
    print(
        f"  import of a {args.import_n:,}-entry .bib: {imp['s']:.2f} s = {pps:,.0f} entries/s, "
        f"{imp['added']:,} added, {imp['problems']} problems, peak {imp['peak_mb']:.0f} MB"
    )
    for dialect, secs in imp["reexport"].items():
        print(
            f"  export of those {imp['added']:,} papers ({imp['records']:,} with records), {dialect}: "
            f"{secs:.2f} s ({imp['added'] / secs:,.0f}/s)"
        )
    worst_export = max(exp[k]["s"] for k in ("bibtex-first", "bibtex-again", "biblatex-again"))
    print()
    print(
        f"summary: export {prep['papers']:,} papers worst {worst_export:.2f} s "
        f"[{mark(worst_export <= TARGET_EXPORT_S)} <= {TARGET_EXPORT_S:.0f} s] | import {pps:,.0f} entries/s "
        f"[{mark(pps >= TARGET_IMPORT_PPS)} >= {TARGET_IMPORT_PPS:,.0f}] | export peak {exp['peak_mb']:.0f} MB"
    )
    print_footer(commit, t0)
    if args.keep:
        print(f"working folder kept: {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
