"""A paper's files from the command line: `attach`, `detach`, `files`, `open`, and the PDFs
and folders that `import` takes (each PDF a paper, its file attached; `--online` completes the
new papers' records by the look-up `lookup --apply` makes).

Opening runs the system's viewer: `xdg-open` (Linux and the BSDs), `open` (macOS),
`os.startfile` (Windows); $PAPERSHELF_OPENER, a command line, replaces it (the tests' tiny
script that writes down the path it was given).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from .. import paths
from ..core.attachments import looks_like_pdf
from ..core.errors import PapershelfError
from ..core.library import SERVICE_NAMES, Library, PdfImportReport
from .commands import open_library, resolve_ids
from .output import EXIT_FAILED, EXIT_OK, UsageError, plural, print_over

ENV_OPENER = "PAPERSHELF_OPENER"


def human_size(n: int) -> str:
    """A size as people read it: 812 bytes, 14.2 KB, 3.1 MB."""
    if n < 1000:
        return f"{n} bytes"
    for unit in ("KB", "MB", "GB"):
        n_units = n / 1000
        if n_units < 1000 or unit == "GB":
            return f"{n_units:.1f} {unit}"
        n = int(n_units)
    return f"{n} bytes"  # pragma: no cover - the loop returns


def file_lines(lib: Library, paper_id: str) -> list[str]:
    """Each of a paper's files on a line: number, name, size, pages, linked, missing."""
    out = []
    for n, (item, where, exists) in enumerate(lib.paper_files(paper_id), 1):
        bits = [human_size(item.size)]
        if item.pages:
            bits.append(plural(item.pages, "page"))
        if item.label:
            bits.append(item.label)
        if item.linked:
            bits.append("linked")
        state = "" if exists else "   MISSING: not found at " + str(where)
        out.append(f"{n:>3}. {item.name}  ({', '.join(bits)}){state}")
    return out


def print_files(lib: Library, paper_id: str, heading: bool = False) -> None:
    """`files` and `show`: a paper's files, or that it has none."""
    lines = file_lines(lib, paper_id)
    if heading:
        if lines:
            print("\nfiles:")
            print("\n".join(lines))
        return
    print("\n".join(lines) if lines else f"Paper {paper_id} has no files. Attach one with 'papershelf attach ID FILE'.")


def cmd_attach(args: argparse.Namespace) -> int:
    """`attach ID FILE... [--link] [--label TEXT]`: copied into the library's files/ folder, or linked."""
    with open_library(args, write=True) as lib:
        pid = resolve_ids(lib, [args.id])[0]
        done = lib.attach_files(pid, args.files, link=args.link, label=args.label or "")
        title = lib.get(pid).title[:70]
        how = "linked" if args.link else "copied into the library"
        if done.added:
            print(f'Attached {plural(len(done.added), "file")} to {pid} "{title}" ({how}):')
            for item in done.added:
                print(f"  {item.name}" + (f" ({plural(item.pages, 'page')})" if item.pages else ""))
        for name in done.already:
            print(f"  {name}: the paper has this file already (the same content)")
        for note in done.notes:
            print(f"  note: {note}")
        for problem in done.problems:
            print(f"papershelf: {problem}", file=sys.stderr)
        if not done.added and not done.already:
            print("No file was attached.")
    return EXIT_FAILED if done.problems else EXIT_OK


def cmd_detach(args: argparse.Namespace) -> int:
    """`detach ID N`: take file N (as `files` numbers them) off the paper; the file stays on disk."""
    with open_library(args, write=True) as lib:
        pid = resolve_ids(lib, [args.id])[0]
        item = lib.detach_file(pid, args.number - 1)
        where = item.location(lib.folder)
        print(f"Removed file {args.number} ({item.name}) from {pid}.")
        if not item.linked:
            print(f"The copy stays at {where} ('papershelf undo' attaches it again).")
    return EXIT_OK


def cmd_files(args: argparse.Namespace) -> int:
    """`files ID`: the paper's files; a missing one is said to be missing, never an error."""
    with open_library(args, write=False) as lib:
        print_files(lib, resolve_ids(lib, [args.id])[0])
    return EXIT_OK


def opener_command(path: Path) -> list[str] | None:
    """The command that shows `path` in the system's viewer (None: `os.startfile`, on Windows)."""
    custom = os.environ.get(ENV_OPENER, "").strip()
    if custom:
        return [*shlex.split(custom), str(path)]
    if sys.platform == "win32":
        return None
    return ["open" if sys.platform == "darwin" else "xdg-open", str(path)]


def open_in_viewer(path: Path) -> None:
    """Show a file in the system's viewer; PapershelfError in words when it cannot be."""
    cmd = opener_command(path)
    try:
        if cmd is None:
            os.startfile(path)  # type: ignore[attr-defined]  # Windows only
            return
        # a viewer the opener starts may run on and inherit what the opener was given: no pipe
        # (waiting for a pipe to close waited for the viewer), its words in a file read after
        with tempfile.TemporaryFile() as said_file:
            res = subprocess.run(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=said_file,
                timeout=60,
                check=False,
                start_new_session=True,
            )
            said_file.seek(0)
            said = said_file.read(4096).decode("utf-8", "replace").strip().splitlines()
    except FileNotFoundError:
        assert cmd is not None
        raise PapershelfError(
            f"cannot open {path}: there is no {cmd[0]!r} program here (install xdg-utils, or set ${ENV_OPENER})"
        ) from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PapershelfError(f"cannot open {path}: {exc}") from None
    if res.returncode != 0:
        raise PapershelfError(
            f"cannot open {path}: {cmd[0]} exited with {res.returncode}" + (f" ({said[-1]})" if said else "")
        )


def cmd_open(args: argparse.Namespace) -> int:
    """`open ID [N]`: file N (the first by default) in the system's viewer; records when it was opened."""
    with open_library(args, write=False) as lib:
        pid = resolve_ids(lib, [args.id])[0]
        files = lib.paper_files(pid)
        if not files:
            raise UsageError(f"paper {pid} has no files to open; attach one with 'papershelf attach {pid} FILE'")
        if not 1 <= args.number <= len(files):
            raise UsageError(f"paper {pid} has {plural(len(files), 'file')}; there is no file number {args.number}")
        item, where, exists = files[args.number - 1]
    if not exists:
        how = "linked file was moved or deleted" if item.linked else "copy is gone from the library folder"
        print(f"papershelf: file {args.number} of {pid} is missing: {where} (the {how})", file=sys.stderr)
        return EXIT_FAILED
    where = Path(os.path.abspath(where))
    open_in_viewer(where)
    print(f"Opened {where}")
    try:
        with Library.open(paths.data_dir(args.data_dir)) as lib:
            lib.mark_opened(pid)
    except PapershelfError as exc:  # a read-only library: the file opened all the same
        print(f"papershelf: note: when it was opened is not recorded: {exc}", file=sys.stderr)
    return EXIT_OK


# ---- import: PDFs and folders -------------------------------------------------------------------


def is_pdf_target(path: Path) -> bool:
    """Whether `import` reads this as PDFs: a folder, a *.pdf name, or a file that starts as a PDF."""
    if path.is_dir() or path.suffix.lower() == ".pdf":
        return True
    try:
        with open(path, "rb") as f:
            return looks_like_pdf(f.read(1024))
    except OSError:
        return False


class _Progress:
    """How far an import of PDFs is, on stderr, rewritten in place on a terminal (a pipe gets the
    first line and the report)."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.said = False

    def __call__(self, n: int, total: int, path: str) -> None:
        try:
            if self.tty and total > 1:
                print_over(f"importing PDF {min(n + 1, total)}/{total}…" if path else "", end="" if path else "\n")
            elif not self.said and total > 1:
                print(f"papershelf: importing {plural(total, 'PDF')}…", file=sys.stderr, flush=True)
            self.said = True
        except OSError:
            pass


def import_pdf_paths(lib: Library, targets: list[Path]) -> PdfImportReport:
    """`import`'s PDFs and folders: each PDF a paper (see Library.import_pdfs); the report printed."""
    report = lib.import_pdfs(targets, progress=_Progress())
    for line in report.lines():
        print(line)
    return report


def complete_online(args: argparse.Namespace, ids: list[str]) -> int:
    """`import --online`: fetch the record of each new paper's own DOI or arXiv id (as `add` does)
    and apply it whole (`Library.complete_found`); the library is not held open while the network
    is asked. 1 when a record could not be fetched."""
    from ..core.library import OnlineSession
    from .records import ENV_MAILTO

    with Library.open(paths.data_dir(args.data_dir), readonly=True) as lib:
        idents = lib.own_identifiers(ids)
        read_at = lib.records(list(idents))
    if not idents:
        return EXIT_OK
    print(f"Fetching the records of {plural(len(idents))} by DOI or arXiv id…")
    with OnlineSession(contact=getattr(args, "mailto", None) or os.environ.get(ENV_MAILTO, "")) as session:
        fetched = session.fetch(list(idents.values()))
    by_ident = dict(fetched.found)
    found = {pid: by_ident[ident] for pid, ident in idents.items() if ident in by_ident}
    for ident, why in fetched.failed:
        print(f"papershelf: {ident}: {why} (the paper keeps what its PDF said)", file=sys.stderr)
    if found:
        with open_library(args, write=True) as lib:
            done, changed = lib.complete_found(found, expect=read_at)
        for pid in found:
            if pid in done.applied:
                service = by_ident[idents[pid]].service
                print(f"{pid}: completed from {SERVICE_NAMES.get(service, service)}: " + ", ".join(changed[pid]))
            else:
                print(f"{pid}: not completed: {done.note(pid) or 'the record adds nothing'}")
    return EXIT_FAILED if fetched.failed else EXIT_OK
