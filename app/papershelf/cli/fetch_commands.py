"""`fetch-pdf ID... | --all-missing` (issue 24): download papers' PDFs (arXiv's, or an open-access
PDF their record names) and attach them. Running it is the user asking to go online, as `add` and
`lookup` are: the command line needs no other consent. The library is not held open while the
network is asked: the papers are read first, and each PDF is attached as it arrives, in one short
write (so ^C keeps what was fetched). The downloads wait in a folder of the cache, removed at the end.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ..core.errors import PapershelfError
from ..core.library import Library
from .commands import open_library, resolve_ids
from .output import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, UsageError, plural

if TYPE_CHECKING:
    from ..core.library import PdfFetch


def _say(text: str) -> None:
    """A line on stderr at once (a wait, the start): a long batch is never silent."""
    try:
        print(f"papershelf: {text}", file=sys.stderr, flush=True)
    except OSError:  # stderr closed under us: carry on
        pass


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB" if size >= 100 * 1024 else f"{max(1, round(size / 1024))} KB"


def _papers(args: argparse.Namespace) -> list[Any]:
    """The papers named, or every paper without a PDF on this machine (--all-missing): a paper
    whose PDF is attached and there is skipped; one whose only PDF is missing here is fetched."""
    from .. import paths

    with Library.open(paths.data_dir(args.data_dir), readonly=True) as lib:
        if args.ids:
            return [lib.get(pid) for pid in dict.fromkeys(resolve_ids(lib, args.ids))]
        return [
            p for p in lib.papers() if not any(item.is_pdf() and there for item, _where, there in lib.paper_files(p.id))
        ]


class _Batch:
    """What the batch did, paper by paper: each PDF attached as it arrives, each failure said."""

    def __init__(self, args: argparse.Namespace, total: int, lib: Library) -> None:
        self.args, self.total, self.lib = args, total, lib
        self.done = self.attached = self.already = self.failed = self.no_source = 0

    def each(self, one: PdfFetch) -> None:
        self.done += 1
        at = f"{self.done}/{self.total} {one.paper_id}"
        if one.path is None:
            if one.no_source and self.args.all_missing:  # nothing to fetch from: not a failure here
                self.no_source += 1
                print(f"{at}: skipped: {one.problem}", flush=True)
            else:
                self.failed += 1
                _say(f"{at}: {one.problem}")
            return
        try:
            # a download PDFium cannot open (a login page after "%PDF", a body cut short) is refused
            report = self.lib.attach_files(one.paper_id, [one.path], readable=True)
        except PapershelfError as exc:  # deleted meanwhile, a read-only library, a full disk
            self.failed += 1
            _say(f"{at}: the PDF was downloaded but not attached: {exc}")
            return
        for problem in report.problems:
            self.failed += 1
            _say(f"{at}: the PDF was downloaded but not attached: {problem}")
        for item in report.added:
            self.attached += 1
            pages = f"{plural(item.pages, 'page')}, " if item.pages else ""
            print(f"{at}: attached {item.path} ({pages}{_megabytes(item.size)}) from {one.url}", flush=True)
        if report.already:
            self.already += 1
            print(f"{at}: already attached (the same file), from {one.url}", flush=True)

    def summary(self, cancelled: bool) -> str:
        parts = [f"{plural(self.attached, 'PDF')} attached"]
        if self.already:
            parts.append(f"{self.already} already attached")
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.no_source:
            parts.append(f"{plural(self.no_source)} with nowhere to fetch from")
        if cancelled and self.done < self.total:
            parts.append(f"stopped after {self.done} of {plural(self.total)}")
        return ", ".join(parts)


def cmd_fetch_pdf(args: argparse.Namespace) -> int:
    """`fetch-pdf ID... | --all-missing`: each paper's PDF downloaded, verified and attached; a line
    per paper and a summary; 1 when some failed, 130 after ^C (what was fetched is kept)."""
    from ..core.library import OnlineSession

    if bool(args.ids) == bool(args.all_missing):
        raise UsageError("name the papers whose PDF to fetch, or give --all-missing for every paper without one")
    papers = _papers(args)
    if not papers:
        print("every paper has its PDF attached: nothing to fetch")
        return EXIT_OK
    # opened for writing before anything is downloaded: a library another Papershelf holds is
    # said now, not after every download of the batch
    with open_library(args, write=True) as lib:
        batch = _Batch(args, len(papers), lib)
        _say(f"fetching the PDFs of {plural(len(papers))}…")
        folder = OnlineSession.incoming_folder()
        interrupted = False
        session = OnlineSession(on_wait=_say)
        try:
            with session:
                session.fetch_pdfs(papers, folder, each=batch.each)
        except KeyboardInterrupt:
            session.cancel()
            interrupted = True
            print(file=sys.stderr)
        finally:
            OnlineSession.remove_folder(folder)
    print(batch.summary(interrupted or session.pdfs.cancelled))
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_FAILED if batch.failed else EXIT_OK
