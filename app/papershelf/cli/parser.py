"""The command line's grammar: argparse, and file paths given instead of a command."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NoReturn

from .. import __version__, paths
from ..core.biblio.sorting import SORT_KEYS
from ..core.paper import Status
from .output import EXIT_USAGE, UsageError

# every command, in the order of `papershelf --help`; commands.COMMANDS maps them to their functions
COMMAND_NAMES = (
    "import",
    "list",
    "show",
    "tag",
    "tags",
    "status",
    "note",
    "title",
    "key",
    "set",
    "rate",
    "search",
    "suggest",
    "reindex",
    "export",
    "lists",
    "list-add",
    "list-remove",
    "recover",
    "duplicates",
    "conflicts",
    "add",
    "lookup",
    "fetch-pdf",
    "delete",
    "undo",
    "redo",
    "searches",
    "devices",
    # a paper's files (files_commands.py)
    "attach",
    "detach",
    "files",
    "open",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, not argparse's usage block
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser(data_dir: str | None = None) -> argparse.ArgumentParser:
    """The parser of `papershelf`'s options and commands (its help names the library of `data_dir`)."""
    p = _Parser(
        prog="papershelf",
        allow_abbrev=False,  # "--data" would open the library that --help, reading "--data-dir", does not name
        description="A reading-list manager for research papers. With no command, opens the Papershelf window. "
        + _library_said(data_dir),
    )
    p.add_argument("--version", action="version", version=f"papershelf {__version__}")
    p.add_argument(
        "--install-desktop",
        action="store_true",
        help="add Papershelf to the desktop's application menu (and as a handler of .bib/.ris files)",
    )
    p.add_argument("--uninstall-desktop", action="store_true", help="remove what --install-desktop added")
    p.add_argument(
        "--data-dir",
        metavar="DIR",
        help=f"the library folder, for this start only (else ${paths.ENV_DATA_DIR}, else the default library "
        f"chosen in the window's Preferences, else {paths.platform_data_dir()})",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    c = sub.add_parser(
        "import", help="import paper listings, .bib/.ris files, or PDFs and folders of PDFs (a paper each)"
    )
    c.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="a file, a PDF or a folder of PDFs; '-' reads a pasted listing from standard input",
    )
    c.add_argument("--samples", action="store_true", help="import the sample listings shipped with Papershelf")
    c.add_argument(
        "--as",
        dest="as_format",
        choices=("listing",),
        help="read the files as paper listings even where they only partly look like one",
    )
    c.add_argument(
        "--keywords-as-tags",
        action="store_true",
        help="also tag the new papers with their records' keywords (a record's keywords are always "
        "kept and searchable as keyword:)",
    )
    c.add_argument(
        "--online",
        action="store_true",
        help="for PDFs: complete the new papers that have a DOI or arXiv id online (as lookup --apply does)",
    )
    c.add_argument("--mailto", metavar="EMAIL", help="with --online: a contact e-mail for Crossref and OpenAlex")

    c = sub.add_parser("list", help="list papers")
    c.add_argument("--json", action="store_true", help="print a JSON array")
    c.add_argument("--status", type=_status)
    c.add_argument("--tag")
    c.add_argument("--list", dest="list_name", metavar="LIST")
    c.add_argument("--area")
    c.add_argument(
        "--sort", choices=tuple(SORT_KEYS), help="order by a column (read: by the date read, papers not read last)"
    )
    c.add_argument("--reverse", action="store_true", help="the sort's order reversed")

    c = sub.add_parser("show", help="show one paper")
    c.add_argument("id")
    g = c.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true")
    g.add_argument("--bibtex", action="store_true", help="print its entry as an export writes it")
    c.add_argument(
        "--dialect",
        choices=("bibtex", "biblatex"),
        default="bibtex",
        help="with --bibtex: bibtex (classic BibTeX names and types) or biblatex (for biber) (default: %(default)s)",
    )

    c = sub.add_parser("tag", help="add or remove tags")
    c.add_argument("ids", nargs="+", metavar="ID")
    c.add_argument("--add", action="append", default=[], metavar="TAG")
    c.add_argument("--remove", action="append", default=[], metavar="TAG")

    c = sub.add_parser("tags", help="show the tags and how many papers have each; delete or rename a tag")
    g = c.add_mutually_exclusive_group()
    g.add_argument("--delete", nargs="+", metavar="TAG", help="take these tags off every paper")
    g.add_argument(
        "--rename",
        nargs=2,
        metavar=("OLD", "NEW"),
        help="rename a tag on every paper (onto an existing tag: merge); saved searches follow",
    )
    g.add_argument(
        "--drop-keyword-tags",
        action="store_true",
        help="take off each paper the tags that are only its record's keywords (as older imports made them); "
        "tags you applied yourself stay, and the keywords stay the record's",
    )

    c = sub.add_parser("status", help="set the reading status: " + ", ".join(s.value for s in Status))
    c.add_argument("args", nargs="+", metavar="ID... STATUS")

    c = sub.add_parser("note", help="set a paper's notes ('-' reads them from standard input)")
    c.add_argument("id")
    c.add_argument("text")

    c = sub.add_parser("title", help="give a paper its real title ('' goes back to the derived one)")
    c.add_argument("id")
    c.add_argument("title")

    c = sub.add_parser("key", help="show or set a paper's citation key ('' lets Papershelf choose again)")
    c.add_argument("id")
    c.add_argument("key", nargs="?")

    c = sub.add_parser(
        "set",
        help="edit a paper's record: FIELD=VALUE (author='Family, Given and {Corporate}'), --type TYPE",
    )
    c.add_argument("id")
    c.add_argument("fields", nargs="*", metavar="FIELD=VALUE")
    c.add_argument("--type", metavar="TYPE", help="the entry type (article, inproceedings, book, misc…)")
    c.add_argument("--force", action="store_true", help="add a field no BibTeX or BibLaTeX type knows")

    c = sub.add_parser("rate", help="rate papers 1-5 (0 clears)")
    c.add_argument("args", nargs="+", metavar="ID... RATING")

    c = sub.add_parser(
        "search",
        help='full-text search: words, "phrases", AND OR NOT, author: tag: status: area: list: year:, prefix*, fuzzy~',
    )
    c.add_argument("query", nargs="*", metavar="QUERY")
    c.add_argument("--json", action="store_true")
    c.add_argument("--limit", type=_positive_int, default=20)
    c.add_argument("--status", type=_status)
    c.add_argument("--tag")
    c.add_argument("--list", dest="list_name", metavar="LIST")
    c.add_argument("--area")
    c.add_argument("--sort", choices=("relevance", "added", "title"), default="relevance")
    c.add_argument(
        "--saved",
        metavar="NAME",
        help="a search saved in the window (its words and filters; QUERY and options add to it)",
    )

    c = sub.add_parser("suggest", help="papers to add to a tag or a reading list, with the words that explain each")
    g = c.add_mutually_exclusive_group()
    g.add_argument("--tag", help="suggest papers for this tag (at least 2 papers must have it)")
    g.add_argument("--list", dest="list_name", metavar="LIST", help="suggest papers for this reading list")
    c.add_argument("--limit", type=_positive_int, default=20)
    c.add_argument("--json", action="store_true", help="print a JSON array of {id, title, score, terms}")

    sub.add_parser(
        "reindex", help="read the attached PDFs' text not read yet, then rebuild the search index from the library"
    )

    c = sub.add_parser(
        "export",
        help="write papers to a BibTeX, BibLaTeX or RIS file (all, or a tag, a list, a status, a search, or ids)",
    )
    g = c.add_mutually_exclusive_group()
    g.add_argument("--tag")
    g.add_argument("--list", dest="list_name", metavar="LIST")
    g.add_argument("--status", type=_status)
    g.add_argument("--query", metavar="QUERY", help="the papers a search finds")
    g.add_argument("--ids", nargs="+", metavar="ID", help="ids or unique id prefixes")
    g.add_argument("--saved", metavar="NAME", help="the papers a saved search finds")
    c.add_argument(
        "--format",
        choices=("bibtex", "biblatex", "ris"),
        help="bibtex: for classic BibTeX styles; biblatex: for biber; ris: RIS for reference managers "
        "(default: ris for an output ending in .ris, else bibtex)",
    )
    c.add_argument("--dialect", choices=("bibtex", "biblatex"), help="the BibTeX dialect (the same as --format)")
    c.add_argument("-o", "--output", required=True, metavar="FILE", help="'-' writes to standard output")
    c.add_argument(
        "--force", action="store_true", help="replace FILE even if Papershelf did not write it or it changed since"
    )
    c.add_argument(
        "--files",
        action="store_true",
        help="BibTeX: write each paper's attached files as a file field (JabRef's form, absolute paths)",
    )

    sub.add_parser("lists", help="show the reading lists")

    c = sub.add_parser("list-add", help="add papers to a reading list (created if new)")
    c.add_argument("name")
    c.add_argument("ids", nargs="+", metavar="ID")

    c = sub.add_parser("list-remove", help="take papers off a reading list")
    c.add_argument("name")
    c.add_argument("ids", nargs="+", metavar="ID")

    sub.add_parser(
        "recover",
        help="repair a damaged library: keep every intact line and readable edit, take "
        "what is missing from the latest good backup, and say exactly what was lost",
    )

    c = sub.add_parser("duplicates", help="list possible duplicates; merge a pair or keep it apart")
    what = c.add_mutually_exclusive_group()
    what.add_argument("--json", action="store_true", help="print the pairs as a JSON array")
    what.add_argument("--merge", nargs=2, metavar=("A", "B"), help="merge paper B into paper A")
    what.add_argument("--keep-apart", nargs=2, metavar=("A", "B"), help="remember that A and B are different papers")

    c = sub.add_parser(
        "conflicts", help="values kept when two devices changed the same thing at once; take or dismiss one"
    )
    what = c.add_mutually_exclusive_group()
    what.add_argument("--json", action="store_true", help="print the conflicts as a JSON array")
    what.add_argument("--take", type=int, metavar="N", help="take conflict N's kept value (or bring the paper back)")
    what.add_argument("--dismiss", type=int, metavar="N", help="keep the value shown; let conflict N's value go")

    mailto = "a contact e-mail sent to Crossref and OpenAlex (their polite pools; or $PAPERSHELF_MAILTO)"
    c = sub.add_parser("add", help="add papers by DOI or arXiv id (or doi.org / arxiv.org links): fetched online")
    c.add_argument("identifiers", nargs="+", metavar="IDENTIFIER")
    c.add_argument("--mailto", metavar="EMAIL", help=mailto)

    c = sub.add_parser(
        "lookup", help="find the published version of papers online (arXiv, OpenAlex, Crossref, Semantic Scholar)"
    )
    c.add_argument("ids", nargs="*", metavar="ID")
    c.add_argument("--derived", action="store_true", help="every paper whose title is derived from its abstract")
    c.add_argument("--apply", action="store_true", help="apply the confident findings (a dry run without it)")
    c.add_argument("--accept", action="store_true", help="with --apply: apply the proposed findings too")
    c.add_argument("--json", action="store_true", help="print one JSON object per paper")
    c.add_argument("--mailto", metavar="EMAIL", help=mailto)
    _add_delete(sub)
    _add_sync(sub)
    _add_files(sub)
    _add_fetch(sub)
    return p


def _add_files(sub: argparse._SubParsersAction[_Parser]) -> None:
    """A paper's files: attach, detach, files, open (cli/files_commands.py)."""
    c = sub.add_parser("attach", help="attach files (PDFs, supplements, slides) to a paper: copied into the library")
    c.add_argument("id", metavar="ID")
    c.add_argument("files", nargs="+", metavar="FILE")
    c.add_argument("--link", action="store_true", help="link the files where they are instead of copying them")
    c.add_argument("--label", metavar="TEXT", help="a label for the files, e.g. 'supplement' or 'slides'")

    c = sub.add_parser("detach", help="take file N off a paper (a copied file stays on disk; undo brings it back)")
    c.add_argument("id", metavar="ID")
    c.add_argument("number", type=_positive_int, metavar="N", help="the file's number, as 'files ID' shows it")

    c = sub.add_parser("files", help="a paper's files: number, name, size, pages; missing ones said")
    c.add_argument("id", metavar="ID")

    c = sub.add_parser("open", help="open a paper's file in the system's viewer")
    c.add_argument("id", metavar="ID")
    c.add_argument("number", type=_positive_int, nargs="?", default=1, metavar="N", help="which file (default: 1)")


def _add_fetch(sub: argparse._SubParsersAction[_Parser]) -> None:
    """Fetching PDFs (issue 24): the command's own block."""
    c = sub.add_parser(
        "fetch-pdf",
        help="download papers' PDFs (arXiv's, or an open-access PDF their record names) and attach them",
        description="Download each paper's PDF and attach it: arXiv's PDF for a paper with an arXiv id, else an "
        "open-access PDF its record names (a pdf field, or a url field or link ending in .pdf). Nothing else is "
        "guessed. arXiv is asked once every 3 s. A download that is not a PDF (a web page), is over 100 MB, or "
        "takes over 5 minutes is refused and nothing is kept. Exits with 1 when some could not be fetched.",
    )
    c.add_argument("ids", nargs="*", metavar="ID", help="ids or unique id prefixes")
    c.add_argument(
        "--all-missing", action="store_true", help="every paper without a PDF attached (papers with one are skipped)"
    )


def _add_delete(sub: argparse._SubParsersAction[_Parser]) -> None:
    c = sub.add_parser("delete", help="delete papers from the library (asks first; --yes when not on a terminal)")
    c.add_argument("ids", nargs="+", metavar="ID", help="ids or unique id prefixes")
    c.add_argument("--yes", action="store_true", help="delete without asking")
    c = sub.add_parser(
        "undo",
        help="take back this machine's last edit of the library (exit code 1 when there is nothing to undo)",
        description="Take back the last edit made on this machine (a command or the window): tags, statuses, "
        "notes, ratings, titles, records, imports, deletions, merges, reading lists. A field changed since (here "
        "or by another device) is kept as it is now. The last 100 edits can be undone. Exits with 1, saying so, "
        "when there is nothing to undo.",
    )
    c.add_argument("--list", action="store_true", help="show what can be undone and redone, newest first")
    sub.add_parser(
        "redo",
        help="make the edit undone last again (exit code 1 when there is nothing to redo)",
        description="Make the edit undone last again; a new edit after an undo ends what can be redone. "
        "Exits with 1, saying so, when there is nothing to redo.",
    )


def _add_sync(sub: argparse._SubParsersAction[_Parser]) -> None:
    c = sub.add_parser("searches", help="show the saved searches; save, rename or delete one")
    g = c.add_mutually_exclusive_group()
    g.add_argument(
        "--save", metavar="NAME", help="save QUERY and the filters given under NAME (replaces one of that name)"
    )
    g.add_argument("--rename", nargs=2, metavar=("OLD", "NEW"), help="give a saved search another name")
    g.add_argument("--delete", metavar="NAME", help="forget a saved search")
    c.add_argument("query", nargs="*", metavar="QUERY", help="with --save: the search's words")
    c.add_argument("--status", type=_status, help="with --save: a status filter")
    c.add_argument("--tag", help="with --save: a tag filter")
    c.add_argument("--list", dest="list_name", metavar="LIST", help="with --save: a reading-list filter")
    c.add_argument("--area", help="with --save: an area filter")

    sub.add_parser(
        "devices",
        help="the devices (machines) that edit this library through a synced folder: their edits, "
        "their latest change, whether their files look complete",
    )


def _library_said(data_dir: str | None) -> str:
    """Which library a command uses, and why (the window's status bar says the same)."""
    try:
        return f"Library: {paths.library_choice(data_dir).describe()}."
    except paths.SettingsError as exc:
        return f"Library: unknown ({exc})"


def _positive_int(text: str) -> int:
    if not text.isdecimal() or not text.isascii() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text!r}")
    return int(text)


def _status(text: str) -> Status:
    try:
        return parse_status(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_status(text: str) -> Status:
    """A status by name, or a UsageError offering the closest names."""
    import difflib

    try:
        return Status.parse(text)
    except ValueError:
        names = [s.value for s in Status]
        near = difflib.get_close_matches(text.strip().lower(), names, n=2, cutoff=0.5)
        hint = "did you mean " + " or ".join(repr(n) for n in near) + "? " if near else ""
        raise UsageError(f"unknown status {text!r}; {hint}use one of: {', '.join(names)}") from None


def files_to_open(argv: list[str]) -> list[str] | None:
    """File paths given instead of a command, or None."""
    rest, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--data-dir":
            skip = True
            continue
        if a.startswith("--data-dir="):
            continue
        rest.append(a)
    if rest and rest[0] not in COMMAND_NAMES and not rest[0].startswith("-") and all(Path(a).exists() for a in rest):
        return rest
    return None


def _data_dir_given(argv: list[str]) -> str | None:
    """The --data-dir of these arguments, for the help to name (the last one wins, as in argparse)."""
    given = None
    for i, a in enumerate(argv):
        if a == "--":
            break
        if a == "--data-dir" and i + 1 < len(argv):
            given = argv[i + 1]
        elif a.startswith("--data-dir="):
            given = a.partition("=")[2]
    return given


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The options and command of `papershelf ARGV` (argparse exits: 0 for --help and --version, 2 for a
    wrong command). `open_files` holds the files given instead of a command (`papershelf refs.bib`, what a
    file manager runs), None when there are none."""
    parser = build_parser(_data_dir_given(argv))
    files = files_to_open(argv)
    given = argv if files is None else [a for a in argv if a not in files]
    args, extra = parser.parse_known_args(given)
    if extra and getattr(args, "command", None) == "set":
        extra = [a for a in extra if a != "--"]  # `set ID --type article -- note=-x`
    if extra and getattr(args, "command", None) == "set" and not any(a.startswith("-") for a in extra):
        args.fields += extra  # `set ID --type article year=2024`: fields after the option
    elif extra:
        parser.error("unrecognized arguments: " + " ".join(extra))
    args.open_files = files
    return args
