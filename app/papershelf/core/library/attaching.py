"""A paper's files: attached (copied into the library folder, or linked where they are),
found on this machine, opened. The rules of the records are in core/attachments.py."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..attachments import Attachment, attachments, file_sha256, looks_like_pdf, paper_folder, safe_name
from ..errors import InvalidValueError, ReadOnlyLibraryError
from ..fileio import file_chunks, remove_quietly, write_stream_atomically
from ..paper import Paper
from ..pdf import PdfProblem, pdf_info
from ..store import now_iso

if TYPE_CHECKING:
    from .facade import Library


@dataclass(slots=True)
class Attached:
    """What attaching files to a paper did: the files added, the ones the paper had already
    (same content), and the ones that could not be attached, in words."""

    paper_id: str
    added: list[Attachment] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # the copies this attach made (only these are removed again if the record cannot be written:
    # a file of the same content found there already may be one an undone attach still needs)
    created: list[Path] = field(default_factory=list)


def location(lib: Library, item: Attachment) -> Path:
    """Where an attached file is on this machine."""
    return item.location(lib.folder)


def _check_writable(lib: Library, what: str) -> None:
    if lib.readonly:
        raise ReadOnlyLibraryError(f"The library in {lib.folder} was opened read-only; {what}", lib.folder)


def _free_target(folder: Path, name: str, sha256: str) -> tuple[Path, bool]:
    """Where a copy named `name` goes in `folder`: the name itself, or "name (2).pdf"… when
    another file has it; (path, True) when a file of the same content is there already."""
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    n = 1
    while True:
        candidate = folder / (name if n == 1 else f"{stem} ({n}){dot}{ext}")
        if not candidate.exists():
            return candidate, False
        if candidate.is_file() and file_sha256(candidate) == sha256:
            return candidate, True
        n += 1


def pdf_pages(path: Path) -> tuple[int, str]:
    """A PDF's page count, or 0 and the problem in words."""
    try:
        with open(path, "rb") as f:
            if not looks_like_pdf(f.read(1024)):
                return 0, ""
        return pdf_info(path).pages, ""
    except PdfProblem as exc:
        return 0, str(exc)
    except OSError as exc:
        return 0, f"{path}: {exc.strerror or exc}"


def _attach_one(
    lib: Library,
    paper_id: str,
    source: Path,
    link: bool,
    label: str,
    out: Attached,
    known: set[str],
    readable: bool = False,
) -> None:
    if not source.is_file():
        out.problems.append(f"{source}: no such file" if not source.exists() else f"{source} is not a file")
        return
    sha = file_sha256(source)
    if sha in known:
        out.already.append(str(source))
        return
    pages, problem = pdf_pages(source)
    if problem and readable:
        out.problems.append(f"{problem}; it was not attached")
        return
    if problem:
        out.notes.append(problem)
    if link:
        item = linked_record(source, sha, pages, label)
    else:
        paper = lib.get(paper_id)
        item, created = copy_in(lib, paper_folder(paper.citekey, paper.id), source, sha, pages, label)
        if created:
            out.created.append(item.location(lib.folder))
    known.add(sha)
    out.added.append(item)


def linked_record(source: Path, sha: str, pages: int, label: str = "") -> Attachment:
    """The record of a file linked where it is (its absolute path)."""
    return Attachment(str(source.resolve()), sha, source.stat().st_size, pages, label, now_iso(), True)


def copy_in(lib: Library, rel: str, source: Path, sha: str, pages: int, label: str = "") -> tuple[Attachment, bool]:
    """Copy `source` (content `sha`) into the library's folder `rel` (files/<key or id>),
    atomically, under a free name ("x (2).pdf" beside another x.pdf; a file of the same content
    there already is reused); the record of the copy, and whether this call made the file (False:
    reused). OSError when it cannot be written."""
    folder = lib.folder.joinpath(*rel.split("/"))
    folder.mkdir(parents=True, exist_ok=True)
    target, same = _free_target(folder, safe_name(source.name), sha)
    size = source.stat().st_size
    if not same:
        size, sha = write_stream_atomically(target, file_chunks(source))
    return Attachment(f"{rel}/{target.name}", sha, size, pages, label, now_iso(), False), not same


def prepare_attachments(
    lib: Library,
    paper_id: str,
    paths: Iterable[Path | str],
    link: bool = False,
    label: str = "",
    readable: bool = False,
) -> Attached:
    """See `Library.prepare_attachments`: the slow part of attaching (hashing, reading the pages,
    copying into the library folder), safe on a worker thread; nothing is recorded yet.
    `readable`: a PDF the reader cannot open is refused (a download), not attached with a note."""
    _check_writable(lib, "no file was attached.")
    paper = lib.get(paper_id)
    out = Attached(paper.id)
    known = {a.sha256 for a in attachments(paper.files) if a.sha256}
    for raw in paths:
        try:
            _attach_one(lib, paper.id, Path(os.path.expanduser(str(raw))), link, label, out, known, readable)
        except OSError as exc:
            out.problems.append(f"{raw}: {exc.strerror or exc} (it was not attached)")
    return out


def record_attachments(lib: Library, out: Attached) -> Attached:
    """See `Library.record_attachments`: what `prepare_attachments` made, written to the paper's
    record (one undoable action); the copies are removed again when the record cannot be written."""
    if not out.added:
        return out

    def with_added(p: Paper) -> dict[str, Any]:
        # read under the lock: an edit made while the files were copied is kept
        have = {f.get("sha256") for f in p.files if isinstance(f, dict)}
        return {"files": [*p.files, *(a.to_dict() for a in out.added if a.sha256 not in have)]}

    try:
        # the copies were made outside the store's write lock (a 200 MB file must not hold
        # up every other edit); only the record is written under it
        with lib._store._write_lock:
            lib._set_many([lib.get(out.paper_id).id], with_added)
    except BaseException:
        for made in out.created:
            remove_quietly(made)
        raise
    return out


def attach_files(
    lib: Library,
    paper_id: str,
    paths: Iterable[Path | str],
    link: bool = False,
    label: str = "",
    readable: bool = False,
) -> Attached:
    """See `Library.attach_files`."""
    return record_attachments(lib, prepare_attachments(lib, paper_id, paths, link, label, readable))


def paper_files(lib: Library, paper_id: str) -> list[tuple[Attachment, Path, bool]]:
    """A paper's files: each with where it is on this machine and whether it is there."""
    out = []
    for item in attachments(lib.get(paper_id).files):
        where = item.location(lib.folder)
        out.append((item, where, where.is_file()))
    return out


def mark_opened(lib: Library, paper_id: str) -> None:
    """Record that one of the paper's files was opened now (the reading statistics read it)."""
    if lib.readonly:
        return
    now = now_iso()
    with lib._history.unrecorded():  # not an action to undo
        lib._set_many([paper_id], lambda p: {"opened_at": now})


def check_index(lib: Library, paper_id: str, index: int) -> Attachment:
    """The paper's file number `index` (0-based); InvalidValueError naming how many it has."""
    items = attachments(lib.get(paper_id).files)
    if not 0 <= index < len(items):
        have = f"{len(items)} file(s)" if items else "no file"
        raise InvalidValueError(f"paper {paper_id} has {have}; there is no file number {index + 1}")
    return items[index]


def detach_file(lib: Library, paper_id: str, index: int) -> Attachment:
    """See `Library.detach_file`: the record goes; the file itself stays on disk (a copied one in
    the library's files/ folder too), so that Undo brings the attachment back whole."""
    _check_writable(lib, "no file was removed.")
    pid = lib.get(paper_id).id
    item = check_index(lib, pid, index)
    files = [f for n, f in enumerate(f for f in lib.get(pid).files if isinstance(f, dict)) if n != index]
    lib._set_many([pid], lambda p: {"files": files})
    return item
