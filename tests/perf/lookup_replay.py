"""Find-the-published-version over every seed paper, against the seed replay set.

Not a pytest test; run it by hand::

    PYTHONPATH=app python tests/perf/lookup_replay.py [-v]

Imports the four seed listings into a temporary library (every title there is derived from
the abstract), serves tests/fixtures/metadata/seeds/ on a loopback replay server
(tests/seed_replay.py: arXiv's `abs:` phrase search, OpenAlex, Crossref, Semantic Scholar, the
published versions by DOI; every other search answers nothing), runs `lookup_many` over
every paper and compares each proposal with expected.json. Prints:

- auto: derived titles replaced correctly without asking (the expected title, automatic);
- proposed: the right candidate, below AUTO_CONFIDENCE (offered to the user);
- decoys rejected: papers served only look-alikes, and nothing proposed;
- wrong: a wrong title applied automatically (must be 0), or a wrong one proposed;
- nothing found: papers the set has no answer for, and nothing proposed;
- applied: the automatic proposals applied with Library.edit_record (the title then shown);
and the requests sent per service and the time taken (rate limits scaled by
PAPERSHELF_RATE_SCALE, 0.01 here: the figures are of the matching, not of the network).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "app"), str(ROOT / "tests")]

from papershelf.core.library import Library
from papershelf.core.text import fold
from replay_server import ReplayServer
from seed_replay import EXPECTED, serve_seeds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="print every paper with a fixture")
    args = parser.parse_args()

    server = ReplayServer()
    os.environ.update(server.env())
    tmp = Path(tempfile.mkdtemp(prefix="lookup-replay-"))
    os.environ["PAPERSHELF_CACHE_DIR"] = str(tmp / "cache")
    # imported after the environment points at the replay server
    from papershelf.core.online.http import Http
    from papershelf.core.online.lookup import lookup_many

    serve_seeds(server)
    lib = Library.open(tmp / "lib")
    lib.import_files(sorted((ROOT / "seeds").glob("*.txt")))
    papers = list(lib.papers())
    derived = sum(p.title_derived for p in papers)
    by_place = {(Path(p.sources[0].file).name, p.sources[0].line): p for p in papers}
    expected = {by_place[(str(e["seed"]), int(e["line"]))].id: e for e in EXPECTED}  # type: ignore[call-overload]

    counts: Counter[str] = Counter()
    wrong: list[str] = []
    started = time.perf_counter()
    with Http(cache_dir=tmp / "cache") as http:
        for paper, proposal in zip(papers, lookup_many(http, papers), strict=True):
            e = expected.get(paper.id)
            new_title = proposal.changes.get("title", ("", ""))[1]
            proposed = proposal.confidence >= 0.5 and bool(proposal.changes)
            if e is None or e["outcome"] in ("none", "decoy rejected"):
                if proposal.automatic:
                    counts["wrong"] += 1
                    wrong.append(f"{paper.title[:50]} ← {new_title} (automatic)")
                elif proposed:
                    counts["wrong proposed"] += 1
                    wrong.append(f"{paper.title[:50]} ← {new_title} (proposed)")
                elif e is not None and e["outcome"] == "decoy rejected":
                    counts["decoys rejected"] += 1
                else:
                    counts["nothing found"] += 1
            else:
                right = fold(new_title) == fold(str(e["title"]))
                if not right and proposal.automatic:
                    counts["wrong"] += 1
                    wrong.append(f"{paper.title[:50]} ← {new_title} (automatic; expected {e['title']})")
                elif right and proposal.automatic:
                    counts["auto"] += 1
                    counts["auto as expected" if e["outcome"] == "auto" else "auto, expected proposed"] += 1
                elif right and proposed:
                    counts["proposed"] += 1
                    counts["proposed as expected" if e["outcome"] == "proposed" else "proposed, expected auto"] += 1
                else:
                    counts["missed"] += 1
                    wrong.append(f"{paper.title[:50]}: missed ({proposal.message})")
            if proposal.automatic:
                # applied as the CLI and the GUI apply it: one record edit of every change
                try:
                    lib.edit_record(paper.id, {name: new for name, (_old, new) in proposal.changes.items()})
                except ValueError as error:
                    counts["apply refused"] += 1
                    wrong.append(f"{paper.title[:50]}: the edit was refused ({error})")
                else:
                    after = lib.get(paper.id)
                    ok = after.title == new_title and not after.title_derived
                    counts["applied" if ok else "apply refused"] += 1
            if args.verbose and e is not None:
                print(
                    f"{e['key']} {e['outcome']:>14} → conf {proposal.confidence:.2f} auto={proposal.automatic} "
                    f"{proposal.service or '-':>8} {new_title[:60]!r}"
                )
    elapsed = time.perf_counter() - started
    per_service = Counter(r.path.split("/")[1] for r in server.requests)
    lib.close()
    server.close()

    planned = Counter(str(e["outcome"]) for e in EXPECTED)
    print(
        f"seed papers: {len(papers)} ({derived} with a derived title); with answers in the set: {len(EXPECTED)} "
        f"(expected: {planned['auto']} auto, {planned['proposed']} proposed, "
        f"{planned['decoy rejected']} decoy-only, {planned['none']} unrelated only; "
        f"{sum(1 for e in EXPECTED if e['decoy'] == 'first')} with a decoy ranked first)"
    )
    print(f"auto (derived title replaced correctly): {counts['auto']}  [{counts['auto as expected']} expected auto]")
    print(
        f"proposed (right candidate, below auto):  {counts['proposed']}  "
        f"[{counts['proposed as expected']} expected proposed]"
    )
    print(f"decoys rejected:                          {counts['decoys rejected']}")
    print(f"wrong title applied automatically:        {counts['wrong']}")
    print(f"wrong title proposed:                     {counts['wrong proposed']}")
    print(f"missed (a right answer was served):       {counts['missed']}")
    print(f"nothing found:                            {counts['nothing found']}")
    print(f"applied with Library.edit_record:         {counts['applied']} (refused: {counts['apply refused']})")
    print(
        f"requests: {sum(per_service.values())} ({', '.join(f'{k} {v}' for k, v in sorted(per_service.items()))}); "
        f"{elapsed:.1f} s for {len(papers)} papers (rate limits × {os.environ['PAPERSHELF_RATE_SCALE']})"
    )
    for line in wrong:
        print("  " + line)
    return 1 if counts["wrong"] or counts["apply refused"] else 0


if __name__ == "__main__":
    sys.exit(main())
