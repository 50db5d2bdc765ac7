"""The round trip of a real .bib file through Papershelf, measured with the real tools.

A file is imported into a fresh library through the CLI, exported in both dialects, and the original
and the exports are each compiled (pdflatex + bibtex with plain.bst, pdflatex + biber) citing every
entry; the bibliographies are then compared entry by entry, by key. `round_trip` does one file and
returns its `Figures`; `table` prints them.
"""

from __future__ import annotations

import difflib
import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import bibtexparser
from pylatexenc.latex2text import LatexNodes2Text

from conftest import run_cli

# plain.bst's entry types: an entry of another type is typeset as @misc by plain, and the BibTeX
# dialect of the export maps BibLaTeX types (@online -> @misc ...), so the two cannot match there
BIBTEX_TYPES = frozenset(
    "article book booklet conference inbook incollection inproceedings manual mastersthesis misc "
    "phdthesis proceedings techreport unpublished".split()
)

# fields of the BibLaTeX data model that classic BibTeX does not have. plain.bst never reads them, while
# the BibTeX dialect of the export maps them onto BibTeX's (date -> year/month, journaltitle -> journal,
# location -> address ...): an entry that carries its data in them typesets differently by design, so
# it does not count for "plain identical". Fields neither knows (doi, url, timestamp ...) do count:
# plain ignores them on both sides.
BIBLATEX_ONLY_FIELDS = frozenset(
    "date journaltitle location urldate eventdate origdate eventtitle eventtitleaddon venue maintitle "
    "mainsubtitle maintitleaddon booksubtitle booktitleaddon subtitle titleaddon journalsubtitle "
    "issuetitle issuesubtitle origlocation origpublisher origtitle editora editorb editorc editortype "
    "editoratype editorbtype editorctype translator annotator commentator introduction foreword "
    "afterword bookauthor holder eprinttype eprintclass pagetotal langid langidopts xdata xref related "
    "relatedtype relatedstring entryset execute gender indexsorttitle indextitle label shortauthor "
    "shorteditor shorthand shorthandintro shortjournal shortseries shorttitle sortkey sortname "
    "sorttitle sortyear options ids addendum version part volumes".split()
)

DOC_PLAIN = r"""\documentclass{article}
\begin{document}
\nocite{*}
\bibliographystyle{plain}
\bibliography{refs}
\end{document}
"""

DOC_BIBER = r"""\documentclass{article}
\usepackage[backend=biber]{biblatex}
\addbibresource{refs.bib}
\begin{document}
\nocite{*}
\printbibliography
\end{document}
"""


@dataclass
class Compiled:
    """One run of pdflatex then bibtex or biber: the tool's exit status, its .bbl and its log."""

    returncode: int
    bbl: str
    log: str

    def failure(self) -> str:
        """Why this bibliography cannot be compared ("" when it can): the tool's error, or no .bbl."""
        if self.returncode >= 2 or not self.bbl:
            lines = [ln for ln in self.log.splitlines() if re.search(r"error|ERROR", ln)]
            return (lines[0] if lines else f"exit status {self.returncode}, no .bbl").strip()[:100]
        return ""


def compile_bbl(folder: Path, bib: bytes, engine: str) -> Compiled:
    """Run pdflatex once and `engine` (bibtex or biber) once on `bib` (its bytes as they are), citing
    every entry, in `folder`. Only the first LaTeX run is needed: the .bbl is the tool's output, and
    the bibliography is compared there (its \\bibitem or \\entry blocks), not in the PDF.

    Not test_bibtex.compile_bib: that one writes the file as UTF-8 text, where an original must go to
    the tools byte for byte (one fixture is MacRoman), and runs LaTeX three times for its warnings."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "refs.bib").write_bytes(bib)
    (folder / "doc.tex").write_text(DOC_PLAIN if engine == "bibtex" else DOC_BIBER, encoding="utf-8")

    def run(*cmd: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(cmd, cwd=folder, capture_output=True, text=True, errors="replace", timeout=300)

    run("pdflatex", "-interaction=nonstopmode", "doc.tex")
    tool = run(engine, "doc")
    bbl = folder / "doc.bbl"
    log = folder / "doc.blg"
    return Compiled(
        tool.returncode,
        bbl.read_text(encoding="utf-8", errors="replace") if bbl.exists() else "",
        (log.read_text(errors="replace") if log.exists() else "") + tool.stdout,
    )


def preamble_of(bbl: str) -> str:
    """The @preamble text a .bbl carries (plain.bst writes it before \\begin{thebibliography}, biber in
    \\preamble{...}), white space normalised: without it the bibliography's macros are undefined."""
    m = re.search(r"\\preamble\{%\n(.*?)%\n\}", bbl, re.S)
    if m:
        return _squash(m.group(1))
    if "\\begin{thebibliography}" in bbl:
        return _squash(bbl.split("\\begin{thebibliography}")[0])
    return ""


def _squash(text: str) -> str:
    # BibTeX breaks long lines at a space, or with "%" + newline where there is none: neither is content
    return " ".join(text.replace("%\n", "").split())


def plain_entries(bbl: str) -> dict[str, str]:
    """The entries of plain.bst's .bbl by key, each with its line breaks and white space normalised."""
    body = bbl.split("\\end{thebibliography}")[0]
    found: dict[str, str] = {}
    for chunk in body.split("\\bibitem")[1:]:
        m = re.match(r"\s*(?:\[[^\]]*\])?\{([^}]*)\}", chunk)
        if m:
            found[m.group(1)] = _squash(chunk[m.end() :])
    return found


# Lines of biber's .bbl that cannot be the same by nature: biber writes \field{dateera}{ce} for a date
# that came from a `date` field and none for one that came from `year` + `month`, and the BibLaTeX dialect
# of the export writes `date` for the `year` + `month` of a BibTeX file (the mapping). The era
# of a date before the common era ("bce") stays compared.
_BIBER_BY_NATURE = re.compile(r"^\s*\\field\{(?:end)?dateera\}\{ce\}\s*$", re.M)
# biber numbers the entries that share a label name (extraname), a label year (extradate) ... in sort
# order, and entries whose sort keys tie (xampl's inbook-full and inbook-crossref: one author, title and
# year) in the order the .bib file gives them. A library is a set of papers from many files and keeps no
# file order, so the number cannot be the same by nature; whether the field is there (another entry
# shares the name) stays compared.
_BIBER_EXTRA_NUMBER = re.compile(r"(\\field\{extra(?:name|date|alpha|title|titleyear)\})\{\d+\}")


def biber_entries(bbl: str) -> dict[str, str]:
    """The entries of biber's .bbl by key (\\entry{key}...\\endentry), white space normalised."""
    found: dict[str, str] = {}
    for m in re.finditer(r"\\entry\{([^}]*)\}(.*?)\\endentry", bbl, re.S):
        found[m.group(1)] = _squash(_BIBER_EXTRA_NUMBER.sub(r"\1{#}", _BIBER_BY_NATURE.sub("", m.group(2))))
    return found


@dataclass
class Original:
    """The entries of a .bib file as BibTeX sees them: keys in order, and the keys that count for the
    plain comparison (BibTeX types and no BibLaTeX-only field)."""

    keys: list[str]
    bibtex_only: set[str]
    # entries with an empty key (`@article{,`): BibTeX takes them, but the export must give them a
    # generated key, so they cannot be found by key on the other side
    keyless: int = 0


def read_original(bib: bytes) -> Original:
    """Keys and kinds of the entries of `bib`, read with bibtexparser (a key given twice counts once:
    BibTeX keeps the first)."""
    lib = bibtexparser.parse_string(bib.decode("utf-8", errors="replace"))
    keys: list[str] = []
    plain: set[str] = set()
    keyless = 0
    for e in lib.entries:
        if not e.key.strip():
            keyless += 1
            continue
        if e.key in keys:
            continue
        keys.append(e.key)
        names = {f.key.lower() for f in e.fields}
        if (
            e.entry_type.lower() in BIBTEX_TYPES
            and not names & BIBLATEX_ONLY_FIELDS
            and not any("+" in n for n in names)
        ):
            plain.add(e.key)
    return Original(keys, plain, keyless)


def keys_of(bib: Path) -> set[str]:
    """The entry keys of an exported file."""
    if not bib.exists():
        return set()
    return {e.key for e in bibtexparser.parse_string(bib.read_text(encoding="utf-8", errors="replace")).entries}


@dataclass
class Figures:
    """What one file's round trip kept, and the entries that came out different."""

    name: str
    entries: int = 0
    keys_kept: int = 0
    plain_total: int = 0
    plain_same: int = 0
    biber_total: int = 0
    biber_same: int = 0
    readded: int = 0
    notes: list[str] = field(default_factory=list)
    # (file, dialect, key, one-line difference), for the report of what is left
    diffs: list[tuple[str, str, str, str]] = field(default_factory=list)


def count_papers(lib: Path) -> int:
    """How many papers `papershelf list --json` shows."""
    out = run_cli("list", "--json", data_dir=lib)
    assert out.returncode == 0, out.stderr
    return len(json.loads(out.stdout))


_DECODER = LatexNodes2Text(math_mode="verbatim")


def same_text(before: str, after: str) -> bool:
    """Whether two entries read the same once their LaTeX is decoded (`{\\v C}` and `{\\v{C}}`, `C{\\'e}sar`
    and `César`): a difference of spelling only. Not a figure (the figures compare the .bbl as BibTeX
    wrote it); it tells the integrator which differences are cosmetic."""
    try:
        return " ".join(_DECODER.latex_to_text(before).split()) == " ".join(_DECODER.latex_to_text(after).split())
    except Exception:  # pylatexenc gives up on some broken LaTeX: then it is not known to be the same
        return False


def one_line_diff(before: str, after: str) -> str:
    """Where two normalised entries first part, with a little context: `...orig... => ...export...`."""
    if not after:
        return "missing from the export"
    if same_text(before, after):
        return "(LaTeX spelling only) " + _first_difference(before, after)
    return _first_difference(before, after)


def _first_difference(before: str, after: str) -> str:
    sm = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag != "equal":
            a = before[max(0, i1 - 25) : i2 + 25]
            b = after[max(0, j1 - 25) : j2 + 25]
            return f"{a[:110]!r} => {b[:110]!r}"
    return ""


def round_trip(name: str, source: Path, work: Path) -> Figures:
    """Import `source` into a fresh library with the CLI, export both dialects, compile original and
    exports, re-import each export into the library; the figures."""
    fig = Figures(name)
    work.mkdir(parents=True, exist_ok=True)
    lib = work / "library"
    original_bytes = source.read_bytes()
    original = read_original(original_bytes)
    fig.entries = len(original.keys)
    if original.keyless:
        fig.notes.append(f"{original.keyless} entry(ies) without a key: not compared (the export generates one)")

    exports = {"bibtex": work / "A.bib", "biblatex": work / "B.bib"}
    if cli(fig, "import", str(source), data_dir=lib) is not None:
        for dialect, target in exports.items():
            cli(fig, "export", "--dialect", dialect, "-o", str(target), data_dir=lib)
    # an export that is not there counts as one that lost every entry (the comparisons below say so)

    kept = keys_of(exports["bibtex"]) & keys_of(exports["biblatex"])
    fig.keys_kept = sum(1 for k in original.keys if k in kept)

    comparisons = (("plain", "bibtex", "bibtex", plain_entries), ("biber", "biblatex", "biber", biber_entries))
    for label, dialect, engine, split in comparisons:
        before = compile_bbl(work / f"{label}-original", original_bytes, engine)
        why = before.failure()
        if why:
            fig.notes.append(f"{label} skipped, the original does not compile: {why}")
            continue
        export_bytes = exports[dialect].read_bytes() if exports[dialect].exists() else b""
        after = compile_bbl(work / f"{label}-export", export_bytes, engine)
        if after.failure():
            fig.notes.append(f"{label}: the export does not compile: {after.failure()}")
        if preamble_of(before.bbl) != preamble_of(after.bbl):
            fig.notes.append(f"{label}: the @preamble differs")
            fig.diffs.append((name, label, "@preamble", one_line_diff(preamble_of(before.bbl), preamble_of(after.bbl))))
        old, new = split(before.bbl), split(after.bbl)
        keys = [k for k in original.keys if k in old]
        if label == "plain":
            keys = [k for k in keys if k in original.bibtex_only]
        same = [k for k in keys if old[k] == new.get(k)]
        differ = [(k, one_line_diff(old[k], new.get(k, ""))) for k in keys if old[k] != new.get(k)]
        fig.diffs += [(name, label, k, d) for k, d in differ]
        cosmetic = sum(1 for _, d in differ if d.startswith("(LaTeX spelling only)"))
        if cosmetic:
            fig.notes.append(f"{label}: {cosmetic} of the {len(differ)} entries that differ read the same decoded")
        if label == "plain":
            fig.plain_total, fig.plain_same = len(keys), len(same)
        else:
            fig.biber_total, fig.biber_same = len(keys), len(same)

    for target in exports.values():
        if not target.exists():
            continue
        before_count = count_papers(lib)
        if cli(fig, "import", str(target), data_dir=lib) is not None:
            fig.readded += count_papers(lib) - before_count
    return fig


def cli(fig: Figures, *args: str, data_dir: Path) -> subprocess.CompletedProcess[str] | None:
    """`papershelf ARGS` through the CLI; a failure or a hang becomes a note on `fig` (the other files
    still get their figures), and a hang returns None."""
    try:
        out = run_cli(*args, data_dir=data_dir)
    except subprocess.TimeoutExpired:
        fig.notes.append(f"`papershelf {args[0]}` hung (killed after its timeout)")
        return None
    if out.returncode != 0:
        said = (out.stderr or out.stdout).strip().splitlines()
        fig.notes.append(f"`papershelf {args[0]}` exit {out.returncode}: {said[-1][:80] if said else ''}")
    return out


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "    -"


def table(figures: list[Figures]) -> str:
    """The per-file figures and the totals, as a text table, then the notes."""
    head = f"{'file':38} {'entries':>7} {'keys kept':>15} {'plain same':>16} {'biber same':>16} {'re-added':>8}"
    lines = [head, "-" * len(head)]
    for f in [*figures, total(figures)]:
        if f.name == "TOTAL":
            lines.append("-" * len(head))
        lines.append(
            f"{f.name[:38]:38} {f.entries:7d} {f.keys_kept:4d} {_pct(f.keys_kept, f.entries):>10} "
            f"{f.plain_same:3d}/{f.plain_total:<3d} {_pct(f.plain_same, f.plain_total):>8} "
            f"{f.biber_same:3d}/{f.biber_total:<3d} {_pct(f.biber_same, f.biber_total):>8} {f.readded:8d}"
        )
    for f in figures:
        lines += [f"  {f.name}: {note}" for note in f.notes]
    return "\n".join(lines)


def total(figures: list[Figures]) -> Figures:
    """The sums over all files."""
    t = Figures("TOTAL")
    for f in figures:
        t.entries += f.entries
        t.keys_kept += f.keys_kept
        t.plain_total += f.plain_total
        t.plain_same += f.plain_same
        t.biber_total += f.biber_total
        t.biber_same += f.biber_same
        t.readded += f.readded
    return t
