"""BibTeX `file` fields: the one home of their forms, read on import and written on export.

    JabRef         file = {:papers/x.pdf:PDF}   Description:path:Type, entries split by ";",
                   "\\:" "\\;" "\\\\" escapes (a Windows path is "C\\:\\\\Users\\\\x.pdf")
    Zotero / BBT   file = {/abs/a.pdf;/abs/b.pdf}   plain paths split by ";"
    Mendeley       file = {:C$\\backslash$:/Users/u/a.pdf:pdf}   LaTeX's $\\backslash$ for "\\";
                   file = {:home/u/a.pdf:pdf}   the leading "/" dropped (tried back on)

A relative path is relative to the .bib file's folder. No Qt, no library access.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path, PureWindowsPath

_LATEX = (("$\\backslash$", "\\"), ("{\\textbackslash}", "\\"), ("\\textbackslash{}", "\\"), ("{\\_}", "_"))
_DRIVE = re.compile(r"^[A-Za-z]$")


def _split(text: str, sep: str) -> list[str]:
    """`text` split at each `sep` not escaped by a backslash (the escapes kept, for the next split)."""
    out, part, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            part.append(text[i : i + 2])
            i += 2
            continue
        if ch == sep:
            out.append("".join(part))
            part = []
        else:
            part.append(ch)
        i += 1
    out.append("".join(part))
    return out


def _unescape(text: str) -> str:
    """JabRef's escapes undone: "\\:" → ":", "\\;" → ";", "\\\\" → "\\"."""
    return re.sub(r"\\([\\:;])", r"\1", text)


def _entry_path(entry: str) -> str:
    """The path of one entry: JabRef's/Mendeley's Description:path:Type, or a plain path."""
    parts = _split(entry, ":")
    if len(parts) >= 3:
        # Description:path:Type; a path with an unescaped drive colon ("C:\x.pdf") spans parts
        return _unescape(":".join(parts[1:-1]))
    if len(parts) == 2 and _DRIVE.match(parts[0]):  # Zotero on Windows: C:\Users\a.pdf
        return _unescape(entry)
    if len(parts) == 2:  # "path:Type" or ":path" (JabRef without the type)
        return _unescape(parts[1] if not parts[0] else parts[0])
    return _unescape(entry)


def file_paths(value: str) -> list[str]:
    """The paths a `file` field names, as written (not yet resolved), in order, without repeats."""
    # a value wrapped over lines: each line break with the indentation around it goes, and
    # nothing else (a path may hold two spaces in a row)
    text = re.sub(r"[ \t]*[\r\n]+[ \t]*", " ", value).strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    for latex, plain in _LATEX:
        text = text.replace(latex, plain)
    if "\\" in text and "\\:" not in text and "\\;" not in text and "\\\\" not in text:
        # Zotero/Mendeley's Windows paths carry single backslashes, which are no escapes
        text = text.replace("\\", "\\\\")
    out = [_entry_path(e).strip() for e in _split(text, ";")]
    return list(dict.fromkeys(p for p in out if p))


def resolve(raw: str, folder: Path) -> Path:
    """Where a path of a `file` field is on this machine: as written when absolute, else relative
    to the .bib file's `folder`; Mendeley's path without its leading "/" tried with it."""
    if PureWindowsPath(raw).drive and not Path(raw).is_absolute():  # a Windows path read elsewhere
        return Path(raw)
    path = Path(raw).expanduser()
    if path.is_absolute():
        return path
    near = folder / path
    if not near.exists() and Path("/" + raw).exists():
        return Path("/" + raw)
    if not near.exists() and "\\" in raw and (folder / raw.replace("\\", "/")).exists():
        return folder / raw.replace("\\", "/")  # a relative path written on Windows
    return near


def named_files(value: str, folder: Path) -> list[tuple[str, Path]]:
    """Each path a `file` field names, with where it is on this machine."""
    return [(raw, resolve(raw, folder)) for raw in file_paths(value)]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(":", "\\:").replace(";", "\\;")


def file_field(files: Iterable[tuple[str, Path]]) -> str:
    """A `file` field's value in JabRef's form, ":path:PDF;Label:path2:PDF", from (label, absolute
    path) pairs: what JabRef, Zotero (BBT) and Papershelf read back."""
    entries = []
    for label, path in files:
        kind = path.suffix[1:].upper() or "FILE"
        # a brace in a BibTeX value must be balanced: a label loses its braces, and a path whose
        # braces do not balance (a linked file's) cannot be written at all (`unwritable`)
        label = label.replace("{", "").replace("}", "")
        if unwritable(path):
            continue
        entries.append(f"{_escape(label)}:{_escape(str(path))}:{kind}")
    return ";".join(entries)


def unwritable(path: Path) -> bool:
    """Whether a path cannot go into a BibTeX value: its braces do not balance."""
    depth = 0
    for ch in str(path):
        depth += (ch == "{") - (ch == "}")
        if depth < 0:
            return True
    return depth != 0
