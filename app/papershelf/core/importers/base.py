"""What every importer produces, and reading a file's text safely."""

from __future__ import annotations

import codecs
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ListingError
from ..text import clean_text

# A listing is pasted text: anything bigger than this is not one, and reading
# it whole would only cost memory. 100,000 abstracts are about 170 MB.
MAX_FILE_BYTES = 512 * 1024 * 1024


@dataclass(slots=True)
class Problem:
    """Something in a file the user should know about; the rest still imports."""

    path: str
    line: int  # 1-based; 0 when it concerns the whole file
    message: str
    note: bool = False  # imported, with a change the user is told of (e.g. a citation key that was taken)

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


@dataclass(slots=True)
class Candidate:
    """One paper as found in a file, before it meets the library."""

    abstract: str
    line: int
    title: str = ""
    authors: list[str] = field(default_factory=list)
    area: str = ""
    subarea: str = ""
    year: int | None = None
    venue: str = ""
    doi: str = ""
    arxiv_id: str = ""
    tags: list[str] = field(default_factory=list)
    citekey: str = ""  # the key a .bib file gave it (kept if free)
    # the bibliographic record (see "BIBLIOGRAPHIC RECORD" in paper.py); empty from a listing
    entrytype: str = ""
    bibfields: dict[str, str] = field(default_factory=dict)
    preamble: str = ""
    ris: dict[str, str] = field(default_factory=dict)  # a RIS record as it came (see "RIS RECORD" in paper.py)


@dataclass(slots=True)
class ParsedFile:
    """What an importer read from one file (or paste): its papers and the problems met."""

    path: str
    format: str
    papers: list[Candidate]
    problems: list[Problem]


def read_text(path: Path) -> tuple[str, list[Problem]]:
    """The file's text, whatever its encoding, or a ListingError saying why not.

    UTF-8 (with or without BOM) and UTF-16 with a BOM are read silently.
    UTF-16 without a BOM and legacy 8-bit files are read too, with a note,
    because people save pasted text from whatever editor they have; so is
    UTF-8 with a few invalid bytes (replaced, each line named).
    """
    shown = clean_text(str(path))
    try:
        st = path.stat()
    except FileNotFoundError:
        raise ListingError(f"{shown}: no such file.", path) from None
    except OSError as exc:
        raise ListingError(f"{shown}: cannot read it ({exc.strerror or exc}).", path) from exc
    if stat.S_ISDIR(st.st_mode):
        raise ListingError(f"{shown} is a folder, not a file; choose the listing files inside it.", path)
    if not stat.S_ISREG(st.st_mode):
        raise ListingError(
            f"{shown} is not a regular file (a device, pipe or socket); save the listing as a plain file first.", path
        )
    size = st.st_size
    if size > MAX_FILE_BYTES:
        raise ListingError(
            f"{shown} is {size / 2**20:.0f} MB, too large for a paper listing "
            f"(the limit is {MAX_FILE_BYTES // 2**20} MB); split it into smaller files.",
            path,
        )
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise ListingError(f"{shown}: cannot read it ({exc.strerror or exc}).", path) from exc
    return decode_text(data, shown, path)


def decode_text(data: bytes, shown: str, path: Path | None = None) -> tuple[str, list[Problem]]:
    """Bytes of a listing (a file's, or a paste's) as text, with notes on how they were read."""
    if not data.strip():
        raise ListingError(f"{shown} is empty; there is nothing to import.", path)
    notes: list[Problem] = []

    if data.startswith(codecs.BOM_UTF8):
        text, notes = _decode_utf8(data[3:], shown)  # the mark says UTF-8, whatever the damage
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = _decode(data, "utf-16", path)
    elif _looks_utf16(data):
        # ASCII text in UTF-16-LE has its zero bytes at odd offsets
        enc = "utf-16-le" if data[1:4096:2].count(0) > data[0:4096:2].count(0) else "utf-16-be"
        text = _decode(data, enc, path)
        notes.append(Problem(shown, 0, f"read as {enc.upper()} (the file has no byte-order mark)"))
    else:
        if b"\0" in data[:65536] or _binary_ratio(data[:65536]) > 0.05:
            raise ListingError(
                f"{shown} is a binary file, not a text listing of papers; paste the listing into a plain-text file.",
                path,
            )
        text, notes = _decode_8bit(data, shown)
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return text, notes


# Damaged lines named one by one up to this many; the rest in one note.
MAX_BAD_LINE_NOTES = 20
_CP1252_UNDEFINED = b"\x81\x8d\x8f\x90\x9d"


# characters a Windows-1252 accented capital followed by a symbol decodes to as UTF-8,
# and that real text in a paper listing hardly holds: C1 controls, IPA and spacing
# modifiers, Cyrillic supplement and Armenian, Syriac to NKo
_PLAUSIBLE_RE = re.compile("[^\x00-\x7f\ufffd\u0080-\u009f\u0250-\u02ff\u0500-\u058f\u0700-\u07ff]")


def _decode_8bit(data: bytes, shown: str) -> tuple[str, list[Problem]]:
    """UTF-8, UTF-8 with a few damaged bytes, or a whole file in a legacy encoding.

    In a Windows-1252 file, valid UTF-8 multi-byte sequences only happen by
    chance (an accented capital followed by a symbol), far less often than
    invalid ones (any accented letter between ASCII). So: as many valid
    sequences as invalid ones or more, it is UTF-8 with damage; otherwise a legacy
    encoding (see `_legacy_encoding`), unless Windows-1252 leaves even more bytes unreadable.
    """
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    text = data.decode("utf-8", errors="replace")
    invalid = text.count("\ufffd") - data.count("\ufffd".encode())  # one per invalid sequence
    # valid non-ASCII characters, leaving out what Windows-1252 pairs make by chance
    # ("ß“" is U+07D3, NKo; "É”" is U+0254, IPA): short Windows-1252 text is not UTF-8
    valid = len(_PLAUSIBLE_RE.findall(text))
    if (valid and invalid <= valid) or sum(data.count(b) for b in _CP1252_UNDEFINED) >= invalid:
        return _decode_utf8(data, shown, text)
    line = data[:first_bad].count(b"\n") + 1
    encoding = _legacy_encoding(data)
    return data.decode(encoding, errors="replace"), [
        Problem(
            shown,
            line,
            f"the file is not UTF-8; it was read as {_ENCODING_NAMES.get(encoding, encoding.upper())}. "
            f"Check {'accented names' if encoding == 'cp1252' else 'titles and names'}, "
            "or save the file as UTF-8 and import it again",
        )
    ]


# The encodings the detector may name, as people know them.
_ENCODING_NAMES = {
    "cp1252": "Windows-1252 (Latin-1)",
    "gb18030": "GBK (GB18030)",
    "big5": "Big5",
    "cp932": "Shift-JIS (Windows-932)",
    "shift_jis": "Shift-JIS",
    "euc_jp": "EUC-JP",
    "cp949": "EUC-KR (Windows-949)",
    "euc_kr": "EUC-KR",
    "cp1251": "Windows-1251 (Cyrillic)",
    "koi8_r": "KOI8-R (Cyrillic)",
    "cp1253": "Windows-1253 (Greek)",
    "cp1255": "Windows-1255 (Hebrew)",
    "cp1256": "Windows-1256 (Arabic)",
    "cp874": "Windows-874 (Thai)",
}
# When the detector cannot tell encodings apart (a short text is valid in several East Asian
# encodings, each read as plausible), the one most .bib files in the wild are written in.
_TIE_ORDER = ("gb18030", "big5", "cp932", "shift_jis", "euc_jp", "cp949", "euc_kr", "cp1251")
# Runs of three or more non-ASCII bytes: words in a script written wholly with high bytes
# (Chinese, Japanese, Korean two bytes a character; Cyrillic, Greek one a letter).
_HIGH_RUN_RE = re.compile(rb"[\x80-\xff]{3,}")


def _legacy_encoding(data: bytes) -> str:
    """The 8-bit or East Asian encoding of a file that is not UTF-8.

    Western text has its non-ASCII bytes one by one (an accented letter between ASCII
    ones): it is Windows-1252, as it always was here, because a detector cannot tell
    Latin code pages apart on a short text and takes a chance pair ("ß“") for a Chinese
    character. When most non-ASCII bytes come in runs, the text is in another script and
    charset-normalizer (a maintained detector) names the encoding.
    """
    high = len(data) - len(data.translate(None, _HIGH_BYTES))
    if not high or 2 * sum(len(m) for m in _HIGH_RUN_RE.findall(data)) < high:
        return "cp1252"
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data))
    if not matches:
        return "cp1252"
    best = (matches[0].chaos, -matches[0].coherence)
    tied = {m.encoding for m in matches if (m.chaos, -m.coherence) == best}
    return next((enc for enc in _TIE_ORDER if enc in tied), matches[0].encoding)


def _decode_utf8(data: bytes, shown: str, text: str | None = None) -> tuple[str, list[Problem]]:
    """UTF-8 with invalid bytes replaced by U+FFFD, and a note naming each line that had them."""
    if text is None:
        try:
            return data.decode("utf-8"), []
        except UnicodeDecodeError:
            text = data.decode("utf-8", errors="replace")
    # lines as the parsers count them (CR, LF and CRLF each end one)
    lines = text.replace("\r\n", "\n").replace("\r", "\n")
    genuine = b"\xef\xbf\xbd" in data  # a U+FFFD that was in the file already
    byte_lines = data.splitlines() if genuine else []
    bad: list[int] = []
    line, last = 1, 0
    pos = lines.find("\ufffd")
    while pos >= 0:
        line += lines.count("\n", last, pos)
        last = pos
        if (not bad or bad[-1] != line) and not (genuine and _valid_utf8(byte_lines[line - 1])):
            bad.append(line)
        pos = lines.find("\ufffd", pos + 1)
    notes = [
        Problem(shown, n, "invalid UTF-8 bytes were replaced with \ufffd; the rest of the file is UTF-8")
        for n in bad[:MAX_BAD_LINE_NOTES]
    ]
    if len(bad) > MAX_BAD_LINE_NOTES:
        notes.append(
            Problem(
                shown,
                bad[MAX_BAD_LINE_NOTES],
                f"invalid UTF-8 bytes were replaced with \ufffd here and on "
                f"{len(bad) - MAX_BAD_LINE_NOTES - 1} more line(s)",
            )
        )
    return text, notes


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _decode(data: bytes, encoding: str, path: Path | None) -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise ListingError(
            f"{path or 'the pasted text'}: not valid {encoding.upper()} text ({exc.reason} at byte {exc.start}).", path
        ) from exc


def _looks_utf16(data: bytes) -> bool:
    sample = data[:4096]
    if len(sample) < 4:
        return False
    even_nuls = sample[0::2].count(0)
    odd_nuls = sample[1::2].count(0)
    half = len(sample) // 2
    return max(even_nuls, odd_nuls) > 0.4 * half and min(even_nuls, odd_nuls) < 0.05 * half


def _binary_ratio(sample: bytes) -> float:
    if not sample:
        return 0.0
    return (len(sample) - len(sample.translate(None, _CONTROL_BYTES))) / len(sample)


_CONTROL_BYTES = bytes(b for b in range(32) if b not in (9, 10, 12, 13))
_HIGH_BYTES = bytes(range(0x80, 0x100))
