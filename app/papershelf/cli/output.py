"""What the command line prints: exit codes, one-line errors, tables, JSON.

Exit codes: 0 done; 1 something could not be done (a file could not be
read, the library is damaged or open elsewhere); 2 the command was wrong
(bad arguments, unknown paper id or list).

Everything a command prints goes through one place, `escape_terminal`: standard output and
standard error are wrapped so that a control character (ESC, CSI, OSC, NUL, C1, a carriage
return: `core.limits.escape_controls`) is shown as `\\xNN`, whoever wrote it (a title stored by an
older version, a file name, an error quoting user data, argparse). Papershelf's own sequences (the
"\\r" of a progress line, bold in a search snippet on a terminal, an export's own line ends) are
written with `write_raw`; JSON escapes its own.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Iterable
from itertools import islice
from typing import IO, TYPE_CHECKING, Any

from ..core.errors import InvalidValueError, NotFoundError, PapershelfError
from ..core.limits import escape_controls

if TYPE_CHECKING:
    from ..core.paper import Paper

# Every command imports this module (the parser's errors, the exit codes), `--version` too: what
# only some of them print with (orjson, html, the record's citation and render modules, shutil) is
# imported by the function that needs it.

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """A wrong command: printed as one line, exit 2."""


class EscapingStream:
    """A text stream whose `write` shows control characters as `\\xNN` (core.limits.escape_controls)
    before they reach the terminal; `write_raw` is for Papershelf's own sequences. Everything else
    (flush, isatty, fileno, buffer, encoding) is the wrapped stream's."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        """Write `text` with its control characters escaped; returns its length."""
        self.stream.write(escape_controls(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        """Write each line, escaped."""
        for line in lines:
            self.write(line)

    def write_raw(self, text: str) -> int:
        """Write `text` as it is: only for text Papershelf made (no user data in it)."""
        return self.stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def escape_terminal() -> None:
    """Wrap standard output and standard error in `EscapingStream` (once): from here on no
    command can write a raw control character to the terminal."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, EscapingStream):
            setattr(sys, name, EscapingStream(stream))


def write_raw(text: str, file: Any = None) -> None:
    """Write Papershelf's own text as it is (a "\\r", bold on a terminal, an export's CRLF)."""
    stream = sys.stdout if file is None else file
    if isinstance(stream, EscapingStream):
        stream.write_raw(text)
    else:
        stream.write(text)


def print_over(text: str, end: str = "\n", file: Any = None) -> None:
    """Print `text` over the line the cursor is on (a progress line): Papershelf's own "\\r",
    then the text (escaped), flushed."""
    stream = sys.stderr if file is None else file
    write_raw("\r", stream)
    print(text, end=end, file=stream, flush=True)


def guarded(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a command and turn what it raises into a message and an exit code:
    a wrong command 2 (on one line), anything else Papershelf refused 1, Ctrl+C 130."""
    escape_terminal()
    try:
        return handler(args)
    except (UsageError, NotFoundError, InvalidValueError) as exc:
        print(f"papershelf: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except PapershelfError as exc:
        print(f"papershelf: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:  # `papershelf list | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def plural(n: int, word: str = "paper") -> str:
    """ "1 paper", "2 papers" """
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def print_named(described: Iterable[tuple[str, str]], none_yet: str) -> None:
    """Named things (tags, reading lists, saved searches), a line each: `name  (what it is)`;
    `none_yet` where there are none."""
    printed = False
    for name, what in described:
        print(f"{name}  ({what})")
        printed = True
    if not printed:
        print(none_yet)


def paper_json(paper: Paper, lists: list[str]) -> dict[str, Any]:
    """A paper as `list --json` and `show --json` print it: its record, less the fingerprint, and
    its lists; `fields` holds each field of its bibliographic record as text (`bibfields`, beside
    it, as written in the file), {} for a paper from a listing. A RIS record's own lines are
    left out (`export --format ris` writes them)."""
    from ..core.citation import fields_text
    from ..core.paper import FIELDS

    # every field in its JSON form, defaults included, in FIELDS' order: `to_dict` without its
    # copies (the dict is only printed), a tenth of its time (`list --json` makes 100,000)
    d = dict(FIELDS)
    d.update(paper.raw())
    if len(d) != len(FIELDS):  # a field this version does not know: left out, as to_dict does
        d = paper.to_dict()
    d.pop("fingerprint", None)
    d.pop("ris", None)
    d["lists"] = lists
    d["fields"] = fields_text(paper) if d["bibfields"] else {}
    return d


# What orjson leaves raw in a string and a terminal may act on: DEL and the C1 controls
# (U+0080..U+009F, in UTF-8 0xC2 0x80..0x9F; 0xC2 is never a continuation byte). C0 it escapes.
_JSON_RAW_CONTROLS = re.compile(rb"\x7f|\xc2[\x80-\x9f]")
_C1_CONTROL = re.compile(rb"\xc2[\x80-\x9f]")


def _json_escape(m: re.Match[bytes]) -> bytes:
    return b"\\u%04x" % ord(m.group().decode("utf-8"))


def write_json(data: object) -> None:
    """Print indented JSON (bytes straight to stdout: orjson writes UTF-8), every control
    character as a JSON escape (still the same JSON, harmless on a terminal)."""
    import orjson

    sys.stdout.flush()
    out = orjson.dumps(data, option=orjson.OPT_INDENT_2)
    sys.stdout.buffer.write(_JSON_RAW_CONTROLS.sub(_json_escape, out) + b"\n")
    sys.stdout.buffer.flush()


ARRAY_BATCH = 256  # papers dumped at once by write_json_array (about 600 kB of JSON)


def _escaped(data: bytes) -> bytes:
    """`data` with DEL and the C1 controls as JSON escapes. Most JSON holds none: looking for each
    alone (a byte; a pattern with a literal first byte) is 15× faster than the alternation's search."""
    if b"\x7f" in data or _C1_CONTROL.search(data) is not None:
        return _JSON_RAW_CONTROLS.sub(_json_escape, data)
    return data


def write_json_array(items: Iterable[object]) -> None:
    """`write_json` of a list, as `items` yields them (the same bytes): a whole library's papers
    are never all in memory at once, as objects or as JSON. `ARRAY_BATCH` items at a time go
    through one `orjson.dumps` of a list (its indentation is the whole array's), less its
    brackets."""
    import orjson

    sys.stdout.flush()
    out = sys.stdout.buffer
    dumps, indent = orjson.dumps, orjson.OPT_INDENT_2
    first = True
    it = iter(items)
    while batch := list(islice(it, ARRAY_BATCH)):
        body = dumps(batch, option=indent)[2:-2]  # "[\n" ... "\n]"
        out.write((b"[\n" if first else b",\n") + _escaped(body))
        first = False
    out.write(b"[]\n" if first else b"\n]\n")
    out.flush()


def print_table(papers: list[Paper], read_dates: bool = False) -> None:
    """One line per paper (id, status, `read_dates`: the day read, title cut to the terminal's
    width), then the count."""
    import shutil

    from ..core.paper import local_date

    width = shutil.get_terminal_size((120, 24)).columns
    title_width = max(30, width - 23 - (11 if read_dates else 0))
    for p in papers:
        mark = "~" if p.title_derived else " "
        title = p.title if len(p.title) <= title_width else p.title[: title_width - 1] + "…"
        day = f"{local_date(p.read_at) or ''!s:<10} " if read_dates else ""
        print(f"{p.id}  {p.status.value:<8} {day}{mark}{title}")
    if any(p.title_derived for p in papers):
        print(f"\n{plural(len(papers))}; ~ marks a title derived from the abstract.")
    else:
        print(f"\n{plural(len(papers))}.")


def print_paper(p: Paper, lists: list[str], parent: Callable[[str], Paper | None] | None = None) -> None:
    """Everything about one paper, as `show` prints it; a paper with a bibliographic record
    ends its labelled lines with the record's (`parent` finds a crossref's parent by key)."""
    from ..core.citation import authors_text, has_record, record_view
    from ..core.render import reader_text

    print(reader_text(p.title) + ("   (title derived from the abstract)" if p.title_derived else ""))
    print(f"id:       {p.id}")
    if p.authors:
        print(f"authors:  {authors_text(p)}")
    if p.area:
        print(f"area:     {p.area}" + (f" · {p.subarea}" if p.subarea else ""))
    for label, value in (("year", p.year), ("venue", reader_text(p.venue)), ("doi", p.doi), ("arXiv", p.arxiv_id)):
        if value:
            print(f"{label + ':':<9} {value}")
    print(f"status:   {p.status.value}")
    for dated in reading_dates(p):
        print(dated)
    if p.tags:
        print(f"tags:     {', '.join(p.tags)}")
    if p.rating:
        print(f"rating:   {'★' * p.rating}{'☆' * (5 - p.rating)}")
    if lists:
        print(f"lists:    {', '.join(lists)}")
    for s in p.sources:
        print(f"source:   {s.file}:{s.line} ({s.format})")
    for link in p.links:
        print(f"link:     {link}")
    if has_record(p):
        for line in record_view(p, parent):
            # the lines above say these already
            said = {"author": p.authors, "year": p.year, "doi": p.doi, "eprint": p.arxiv_id == line.text}
            if not said.get(line.name):
                print(f"{line.label.lower() + ':':<9} {line.text}")
    print()
    print(reader_text(p.abstract))
    if p.notes:
        print("\nnotes:\n" + p.notes)


def reading_dates(p: Paper) -> list[str]:
    """`show`'s lines of when the paper became Reading and Read (local dates, ISO)."""
    from ..core.paper import Status, local_date

    read, reading = local_date(p.read_at), local_date(p.reading_at)
    if p.status is Status.READ:
        if read is None:  # marked read before Papershelf kept the date
            changed = local_date(p.updated)
            return ["read:     date not recorded" + (f" (last changed {changed})" if changed else "")]
        return [f"read:     {read}" + (f" (started {reading})" if reading else "")]
    if p.status is Status.READING and reading is not None:
        return [f"reading:  since {reading}"]
    return []


_TAG_RE = re.compile(r"<b[^>]*>(.*?)</b>")


def snippet_text(snippet_html: str) -> str:
    """A search snippet as plain text, the matched words «marked»."""
    import html

    return html.unescape(_TAG_RE.sub(lambda m: f"«{m.group(1)}»", snippet_html))


def print_snippet(indent: str, snippet_html: str, tty: bool) -> None:
    """A search snippet on a line of its own: on a terminal the matched words bold (Papershelf's
    own escape sequences, the words themselves escaped), elsewhere «marked»."""
    if not tty:
        print(indent + snippet_text(snippet_html))
        return
    import html

    pos = 0
    write_raw(indent)
    for m in _TAG_RE.finditer(snippet_html):
        print(html.unescape(snippet_html[pos : m.start()]), end="")
        write_raw("\033[1m")
        print(html.unescape(m.group(1)), end="")
        write_raw("\033[0m")
        pos = m.end()
    print(html.unescape(snippet_html[pos:]))
