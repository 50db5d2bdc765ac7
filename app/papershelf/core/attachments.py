"""A paper's files (PDFs, supplements, slides): what is recorded of each, where it lives,
whether it is there. The one home of these rules; `Paper.files` holds the records
(see ATTACHED FILES in paper.py)."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

FILES_FOLDER = "files"
"""The folder, inside the library folder, that holds the copied files (one folder per paper)."""
PDF_MAGIC = b"%PDF-"
"""How a PDF starts (a PDF may have up to 1024 bytes of junk before it: `looks_like_pdf`)."""


@dataclass(frozen=True, slots=True)
class Attachment:
    """One file of a paper, as recorded in `Paper.files`."""

    path: str
    sha256: str = ""
    size: int = 0
    pages: int = 0
    label: str = ""
    added: str = ""
    linked: bool = False

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Attachment:
        """The attachment of one `Paper.files` entry (missing or mistyped values at their default)."""

        def get(name: str, kind: type, default: Any) -> Any:
            value = d.get(name, default)
            return value if type(value) is kind else default

        return cls(
            path=get("path", str, ""),
            sha256=get("sha256", str, ""),
            size=get("size", int, 0),
            pages=get("pages", int, 0),
            label=get("label", str, ""),
            added=get("added", str, ""),
            linked=get("linked", bool, False),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form kept in `Paper.files` (defaults left out, like a paper's fields)."""
        out: dict[str, Any] = {"path": self.path, "sha256": self.sha256, "size": self.size}
        if self.pages:
            out["pages"] = self.pages
        if self.label:
            out["label"] = self.label
        if self.added:
            out["added"] = self.added
        if self.linked:
            out["linked"] = True
        return out

    @property
    def name(self) -> str:
        """The file's name, as shown."""
        return PurePosixPath(self.path.replace("\\", "/")).name if not self.linked else Path(self.path).name

    def location(self, library_folder: Path | str) -> Path:
        """Where the file is on this machine: a copied file inside the library folder (always: a
        record that names "..", or a root, as another device's line might, cannot point out of
        it), a linked one where it was."""
        if self.linked:
            return Path(self.path)
        parts = [p for p in PurePosixPath(self.path.replace("\\", "/")).parts if p not in ("/", "..", ".")]
        return Path(library_folder).joinpath(*parts) if parts else Path(library_folder) / FILES_FOLDER / "?"

    def is_pdf(self) -> bool:
        """Whether its name says PDF."""
        return self.path.lower().endswith(".pdf")


def attachments(files: list[dict[str, Any]]) -> list[Attachment]:
    """The attachments of a paper's `files`."""
    return [Attachment.from_dict(f) for f in files if isinstance(f, Mapping)]


def file_sha256(path: Path | str, chunk: int = 1 << 20) -> str:
    """The SHA-256 of a file's content, read in chunks (a 500 MB file never held whole)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()


def looks_like_pdf(head: bytes) -> bool:
    """Whether the first bytes of a file are a PDF's (its header within the first 1024 bytes)."""
    return PDF_MAGIC in head[:1024]


# separators, what Windows refuses, and braces (a BibTeX `file` field could not hold them unbalanced)
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|{}]+')
_RESERVED = frozenset(
    {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}
)
NAME_MAX_BYTES = 150
"""A copied file's name at most this many bytes of UTF-8: file systems take 255, and the atomic
write's temporary name and a "(2)" go around it."""


def _cut(text: str, max_bytes: int) -> str:
    """`text` cut to at most `max_bytes` of UTF-8, never inside a character."""
    return text.encode("utf-8")[:max_bytes].decode("utf-8", "ignore")


def safe_name(name: str, fallback: str = "file") -> str:
    """A file or folder name that every system and sync tool takes: no separators, braces or
    characters Windows refuses, not a name Windows reserves (CON, NUL…), no leading dot, at most
    NAME_MAX_BYTES bytes (its extension kept)."""
    name = unicodedata.normalize("NFC", name)
    name = _UNSAFE.sub("_", name).strip(" .")
    if not name:
        return fallback
    if name.split(".")[0].upper() in _RESERVED:
        name = "_" + name
    if len(name.encode("utf-8")) > NAME_MAX_BYTES:
        stem, dot, ext = name.rpartition(".")
        if dot and len(ext) <= 10:
            name = _cut(stem, NAME_MAX_BYTES - len(ext.encode("utf-8")) - 1).rstrip(" .") + "." + ext
        else:
            name = _cut(name, NAME_MAX_BYTES).rstrip(" .")
    return name


def paper_folder(citekey: str, paper_id: str) -> str:
    """The folder, relative to the library folder, that holds a paper's copied files."""
    return f"{FILES_FOLDER}/{safe_name(citekey or paper_id, paper_id)}"


def file_key(record: Mapping[str, Any]) -> str:
    """Which attachment a record of `files` is, for merging the edits of several devices: its
    content (sha256), or "path:" and its path when its content is not known. One key is one file."""
    sha = record.get("sha256")
    if isinstance(sha, str) and sha:
        return sha
    path = record.get("path")
    return "path:" + (path if isinstance(path, str) else "")


def named_files(value: Any) -> Any:
    """`value` as shown to a person: a list of file records (a paper's `files`) as the files'
    names; anything else as it is."""
    if (
        isinstance(value, list)
        and value
        and all(isinstance(f, Mapping) and isinstance(f.get("path"), str) for f in value)
    ):
        return [a.name for a in attachments(value)]
    return value
