"""Everything the importers, the exporters and the record's text make of the test files, as one
JSON file: run it before and after a change that must not change them (issue 23's refactors), and
compare the two files.

Not a pytest test; run it by hand, from the repository's root::

    python tests/perf/codec_outputs.py before.json     # on the old code
    python tests/perf/codec_outputs.py after.json      # on the new
    cmp before.json after.json

What it records: the candidates and problems `parse_bib`, `parse_ris` and `parse_listing` make of
every .bib, .ris and listing under tests/fixtures and seeds/ (and TeX Live's xampl.bib and
biblatex-examples.bib where kpsewhich finds them), and of a few files written here for the branches
those miss (theses, reports, refused macros, dangling author lines ...); `split_authors` of every
listing line; then, with all of them imported into a fresh library, each paper and six edited
copies of it (record fields an edit drops, a derived title, no record, a changed RIS record, a
crossref child, no title nor authors) as BibTeX, BibLaTeX and RIS, and as `record_view` and
`record_display` show it; and the whole library in each format.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from papershelf.core import citation
from papershelf.core.exporters import bibtex
from papershelf.core.exporters import ris as ris_export
from papershelf.core.importers.base import ParsedFile
from papershelf.core.importers.bibfile import parse_bib
from papershelf.core.importers.listing import parse_listing, split_authors
from papershelf.core.importers.ris import parse_ris
from papershelf.core.library import Library
from papershelf.core.limits import MAX_FIELD_CHARS
from papershelf.core.paper import RAW_SOURCES, Paper

ROOT = Path(__file__).resolve().parents[2]

RIS_CASES = [
    "TY  - THES\nAU  - Doe, Jane\nTI  - A thesis\nPB  - MIT\nM3  - Diploma Thesis\nPY  - 2001/05/03/\nER  - \n",
    "TY  - THES\nAU  - Doe, Jane\nTI  - Another\nPB  - MIT\nM3  - PhD thesis\nU1  - doctoral\nER  - \n",
    "TY  - THES\nTI  - Masters\nM3  - Master's thesis\nER  - \n",
    "TY  - RPRT\nAU  - Roe, R\nTI  - Report {x} & $y$\nPB  - Inst\nM3  - Memo\nM1  - 42\nCY  - Town\n"
    "ET  - 2nd\nER  - \n",
    "TY  - CHAP\nAU  - A, B, Jr.\nED  - E, F\nA4  - T, T\nTI  - Chapter\nBT  - Book\nSE  - 7\nSP  - 3 - 9\n"
    "SN  - 978-3-16-148410-0\nSN  - 1234-5678\nER  - \n",
    "TY  - BOOK\nTI  - Whole\nT2  - Series\nY2  - 2019/05/12/\nPY  - July 1948\nKW  - a; b\nN1  - n1\nN1  - n2\n"
    "LA  - en\nER  - \n",
    "TY  - JOUR\nTI  - iPhone BERT\nJO  - J\nJA  - J. Short\nVL  - 1\nIS  - 2\nUR  - https://doi.org/10.1/abc\n"
    "UR  - https://arxiv.org/abs/2301.01234v2\nER  - \n",
    "TY  - CONF\nAU  - X, Y\nTI  - Conf paper\nT2  - Proc\nER  - \n",
    "TY  - JOUR\nAB  - only an abstract\nER  - \nTY  - JOUR\nID  - k1\nER  - \n",
]
WORDS = "word " * 20
LISTING_CASES = [
    f"Deep Learning · Theory\n\nJane Doe, John Roe\n\nDeep Learning\n\n{WORDS}end.\n",
    f"Odd Area · Sub\n\nJane Doe, John Roe\n\nAnn Lee, Bob Ray\n\n{WORDS}end.\n\nshort odd line\n",
    "Jane Doe, John Roe\n\n" + "x" * (MAX_FIELD_CHARS + 5) + "\n\nTheory\n",
    f"论文检索\n\nTheory\n\n{WORDS}no end",
    f"Daily Papers\n\n{WORDS}end.\n\nAnn Lee, Bob Ray\n",
    "\n\n\n",
    f"Theory\nJane Doe, John Roe\n{WORDS}end.\n",
]
AUTHOR_LINES = [
    "Jane Doe, John van der Berg", "A. B. Smith and C. D. Jones", "Smith J.", "Optimization",
    "one two three four five six seven", "Jane Doe; John Roe & Al Bo", "Jane Doe, john roe",
    "Li Wei1*, Zhang San†", "Dr. Who.", "J. R. R. Tolkien Jr.", "de la Cruz", "van der", "Jane (Doe)", "",
    "Ann Lee, , Bob Ray", "Ann Lee:", "Ann B.", "The quick brown fox",
]  # fmt: skip
BIB_CASES = [
    "@string{s0 = {" + "x" * 1000 + "}}\n" + "".join(f"@string{{s{i + 1} = s{i} # s{i}}}\n" for i in range(20))
    + "@article{a, title = s20}\n@article{b, title = {ok}}\n@preamble{s20}\n@preamble{{\\newcommand{\\x}{y}}}\n",
    "@book{p, title = {Parent}, author = {" + " and ".join(f"Au{i}, B" for i in range(2000)) + "}, year = 2000}\n"
    + "".join(f"@inbook{{c{i}, crossref = {{p}}, pages = {i}}}\n" for i in range(3)),
    "@misc{empty, year = 2000}\n@misc{dn, note = {Title derived from the abstract by Papershelf}, abstract = {abs}}\n",
    "@article{x, title = {A}, title = {B}}\n@article{x, title = {C}}\n@article{broken, title = {unclosed\n",
    "",
    "@xdata{xd, publisher = {Pub}}\n@article{y, xdata = {xd}, title = {T}, journaltitle = {JT}, date = {2019-05}}\n",
    "@article{m, title = {M}, eprint = {0412083}, primaryclass = {quant-ph}, archiveprefix = {arXiv}}\n"
    "@article{m2, title = {M2}, arxivid = {1234.5678}}\n"
    "@article{m3, title = {M3}, url = {https://arxiv.org/pdf/2301.01234v1.pdf}}\n",
]  # fmt: skip


def files() -> list[Path]:
    """The test files: the fixtures' .bib, .ris and listings, the seeds, TeX Live's two .bib files."""
    found: list[Path] = []
    for pattern in (
        "tests/fixtures/**/*.bib",
        "tests/fixtures/**/*.ris",
        "tests/fixtures/listings/*.txt",
        "seeds/*.txt",
    ):
        found += sorted(ROOT.glob(pattern))
    for name in ("xampl.bib", "biblatex-examples.bib"):
        try:
            where = subprocess.run(["kpsewhich", name], capture_output=True, text=True).stdout.strip()
        except OSError:
            where = ""
        if where:
            found.append(Path(where))
    return found


def parsed(pf: ParsedFile) -> dict[str, Any]:
    return {
        "format": pf.format,
        "papers": [dataclasses.asdict(c) for c in pf.papers],
        "problems": [dataclasses.asdict(p) for p in pf.problems],
    }


def parse_one(path: Path, out: dict[str, Any]) -> None:
    text = path.read_bytes().decode("utf-8", "replace")
    if path.suffix == ".bib":
        out["parse:" + path.name] = parsed(parse_bib(text, path.name))
    elif path.suffix == ".ris":
        out["parse:" + path.name] = parsed(parse_ris(text, path.name))
    else:
        out["parse:" + path.name] = parsed(parse_listing(text, path.name))
        out["split:" + path.name] = [split_authors(line) for line in text.split("\n")]


def copy(paper: Paper, **changes: Any) -> Paper:
    out = Paper.from_dict(dict(paper.to_dict()))
    for name, value in changes.items():
        setattr(out, name, value)
    return out


def variants(p: Paper) -> list[Paper]:
    """The paper and six edited copies of it (see the module's docstring)."""
    raw = p.bibfields
    gone = {n for names in RAW_SOURCES.values() for n in names}
    return [
        p,
        copy(
            p,
            bibfields={k: v for k, v in raw.items() if k not in gone},
            tags=["edited tag", "ML"],
            year=p.year or 2001,
            venue=p.venue or "Some Venue & Co",
            doi=p.doi or "10.1000/xyz_1%",
            arxiv_id=p.arxiv_id or "2301.01234v2",
            authors=p.authors or ["Jane Doe", "The CGAL Project", "Knuth, Donald E."],
        ),
        copy(
            p,
            title_derived=True,
            title="Derived title with $x^2$",
            abstract=p.abstract or "An abstract with $\\alpha$ and more words.",
            bibfields={k: v for k, v in raw.items() if k not in ("title", "note")},
        ),
        copy(p, entrytype="", bibfields={}, ris={}, links=["https://example.org/a%20b#c"]),
        copy(
            p, title=(p.title or "T") + " edited", authors=[*p.authors, "New Person"], tags=["kw extra"], citekey="K2"
        ),
        copy(
            p,
            bibfields={**{k: v for k, v in raw.items() if k not in ("author", "title")}, "crossref": "{someparent}"},
            title="Child title",
        ),
        copy(p, bibfields={k: v for k, v in raw.items() if k != "title"}, title="", year=None, authors=[], venue=""),
    ]


def written(paper: Paper, parent: Callable[[str], Paper | None], out: dict[str, Any], key: str) -> None:
    keys = {paper.id: paper.citekey or "k" + paper.id[:6]}
    out["bib:" + key] = bibtex.render([paper], keys, "bibtex")
    out["biblatex:" + key] = bibtex.render([paper], keys, "biblatex")
    out["ris:" + key] = ris_export.render([paper])
    out["view:" + key] = [list(line) for line in citation.record_view(paper, parent)]
    shown = citation.record_display(paper, parent)
    out["display:" + key] = [shown.summary, [list(x) for x in shown.links], [list(x) for x in shown.details]]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    out: dict[str, Any] = {}
    found = files()
    for path in found:
        parse_one(path, out)
    out["split:extra"] = [split_authors(line) for line in AUTHOR_LINES]
    for n, text in enumerate(RIS_CASES):
        out[f"synth:ris{n}"] = parsed(parse_ris(text, "x.ris"))
    for n, text in enumerate(LISTING_CASES):
        out[f"synth:listing{n}"] = parsed(parse_listing(text, "x.txt"))
    for n, text in enumerate(BIB_CASES):
        out[f"synth:bib{n}"] = parsed(parse_bib(text, "x.bib"))
    with tempfile.TemporaryDirectory() as tmp, Library.open(Path(tmp) / "lib") as lib:
        lib.import_files([f for f in found if f.suffix in (".bib", ".ris")])
        lib.import_files([f for f in found if f.suffix == ".txt"], as_listing=True)
        papers = sorted(lib.papers(), key=lambda p: p.id)
    by_key = {p.citekey.casefold(): p for p in papers if p.citekey}

    def parent(key: str) -> Paper | None:
        return by_key.get(key.casefold())

    for p in papers:
        for n, paper in enumerate(variants(p)):
            written(paper, parent, out, f"{p.id}/{n}")
    keys = {p.id: p.citekey or "k" + p.id[:6] for p in papers}
    out["all:bibtex"] = bibtex.render(papers, keys, "bibtex")
    out["all:biblatex"] = bibtex.render(papers, keys, "biblatex")
    out["all:ris"] = ris_export.render(papers)
    Path(argv[0]).write_text(json.dumps(out, indent=1, ensure_ascii=False, sort_keys=True))
    print(f"{len(out)} outputs of {len(found)} files and {len(papers)} papers written to {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
