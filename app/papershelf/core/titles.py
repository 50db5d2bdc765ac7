"""A readable title for a paper that arrived without one.

Most listings are abstracts only. A list of 300 abstracts' first words is
unreadable, so each paper gets a derived title, marked as derived:

1. a named contribution: "We introduce \\textsc{VeriSimpl}, a solver–LLM
   framework for …" → "VeriSimpl: a solver–LLM framework for …", and
   "we propose ZEN (Zero-Parameter Hypergraph Neural Network), …" → "ZEN:
   Zero-Parameter Hypergraph Neural Network";
2. otherwise the opening clause of the first sentence.

Either is shortened to a list-friendly length at a clause or word boundary.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .render import plain_text

MAX_TITLE = 90
# the note that marks a derived title in an export: the BibTeX and RIS imports read it back
DERIVED_NOTE = "Title derived from the abstract by Papershelf"
MIN_CUT = 35

_VERBS = r"(?:introduce|propose|present|develop|design|build|release|call|name|term|dub)s?"
# A name: one to three capitalised tokens, at least one of which looks coined
# (an inner capital, a digit, or all caps), e.g. VeriSimpl, DPLM-Evo, Neur2RO.
_TOKEN = r"[A-Z][\w\-+*'’]*"
_NAME_RE = re.compile(rf"^(?P<name>{_TOKEN}(?:\s+{_TOKEN}){{0,2}})\s*,\s+(?P<desc>(?:a|an|the)\s.+)$")
_LONG_ACRO_RE = re.compile(
    r"^(?:(?:a|an|the)\s+(?:new\s+|novel\s+)?)?(?P<long>[\w\-–'’ ]{6,120}?)\s*\((?P<acro>[A-Z][\w\-+*]{1,24})\)"
)
_ACRO_LONG_RE = re.compile(r"^(?P<acro>[A-Z][\w\-+*]{1,24})\s*\((?P<long>[^()]{6,120})\)")
_CLAUSE_RE = re.compile(r",\s|;\s|:\s|\s[–—-]{1,2}\s|\s(?=(?:which|where|while|whereas|but|because|although)\s)")
# a clause shorter than this reads as cut off; a word cut with "…" reads better
MIN_CLAUSE = 45
_LEADING_FLUFF_RE = re.compile(
    r"^(?:In (?:this|the present|our) (?:paper|work|article|study|note),?\s+|Here,?\s+|In short,?\s+)", re.I
)
_ABBREV = ("e.g", "i.e", "et al", "vs", "etc", "cf", "Fig", "Eq", "resp", "approx", "w.r.t", "Dr", "Prof", "St")


def _coined(name: str) -> bool:
    for tok in name.split():
        core = tok.strip("*-+'’")
        if any(c.isdigit() for c in core) or sum(c.isupper() for c in core) >= 2:
            return True
    return False


# a capitalised name right after one of these is something the contribution uses, not its name
_LINKING_WORDS = frozenset(
    "and or of with by using via for to from in on into over under than like as based upon through".split()
)

_SMALL_WORDS = {"a", "an", "and", "the", "of", "for", "in", "on", "to", "with", "by", "via", "from", "at"}


def _mostly_capitalised(phrase: str) -> bool:
    words = [w for w in phrase.split() if w.casefold() not in _SMALL_WORDS]
    return bool(words) and sum(w[0].isupper() for w in words) * 2 >= len(words)


def _expansion(words: list[str], acro: str) -> str | None:
    """The words an acronym stands for, from the phrase just before "(ACRO)"."""
    if not words:
        return None
    initial = acro[0].casefold()
    for i in range(len(words) - 1, -1, -1):
        if words[i] in ("called", "named", "termed", "dubbed", "coined"):
            words = words[i + 1 :]
            break
    if not words:
        return None
    if len(words) <= 12 and words[0][0].isupper():
        return " ".join(words)
    suffix: list[str] = []
    for word in reversed(words):
        if not word[0].isupper():
            break
        suffix.insert(0, word)
    before = words[len(words) - len(suffix) - 1].casefold() if len(suffix) < len(words) else ""
    # "a benchmark, Reward Hacking Benchmark (RHB)" names the contribution; "an approach
    # by means of CP and Reinforcement Learning (RL)" only names a tool it uses
    if len(suffix) >= 2 and suffix[0][0].casefold() == initial and before not in _LINKING_WORDS:
        return " ".join(suffix)
    if len(words) <= 8 and words[0][0].casefold() == initial:
        return " ".join(words)
    return None


_SENTENCE_END_RE = re.compile(r"[.!?](?=\s+[A-Z(\"“0-9]|$)")


def first_sentence(text: str) -> str:
    """The text up to the end of its first sentence (an abbreviation or an initial does not end one)."""
    for m in _SENTENCE_END_RE.finditer(text):
        end = m.start()
        tail = text[max(0, end - 8) : end]
        if tail.endswith(_ABBREV) or (tail[-1:].isupper() and (end == 1 or text[end - 2] == " ")):
            continue  # an abbreviation or an initial, not the end of a sentence
        return text[:end]
    return text


def shorten(text: str, limit: int = MAX_TITLE) -> str:
    """At most `limit` characters: cut at a clause boundary when one is late enough, else at a word, with "…"."""
    text = text.strip().rstrip(" ,;:.–—-")
    if len(text) <= limit:
        return text
    cut = None
    for m in _CLAUSE_RE.finditer(text, 0, limit + 12):
        if m.start() > limit:
            break
        inside_parens = text.count("(", 0, m.start()) > text.count(")", 0, m.start())
        if m.start() >= MIN_CLAUSE and not inside_parens:
            cut = m.start()
    if cut is not None:
        return text[:cut].rstrip(" ,;:.–—-")
    head = text[: limit - 1]
    space = head.rfind(" ")
    if space >= MIN_CUT:
        head = head[:space]
    return head.rstrip(" ,;:.–—-") + "…"


_LEAD_RE = re.compile(
    r"(?:[Ww]e|[Tt]his (?:paper|work|article))\s+(?:first\s+|further\s+|then\s+)?"
    r"(?P<verb>" + _VERBS + r")\s+(?P<rest>[^.;:]{2,400})"
)
_LEAD_WORDS = ("we ", "We ", "his paper ", "his work ", "his article ")


def _lead_matches(text: str, end: int) -> Iterator[re.Match[str]]:
    """Matches of "we introduce …"-style leads in text[:end].

    A regex scan for the whole lead tries it at every word boundary (about
    50 µs an abstract, a fifth of an import); str.find for the few words a
    lead starts with takes microseconds, and the lead is then matched only
    there. ("Here, we propose" is found by its "we".)
    """
    starts = []
    for word in _LEAD_WORDS:
        pos = text.find(word, 0, end)
        while pos != -1:
            start = pos - 1 if word.startswith("his") else pos
            if start >= 0 and (start == 0 or not text[start - 1].isalnum()):
                starts.append(start)
            pos = text.find(word, pos + 1, end)
    for start in sorted(starts):
        m = _LEAD_RE.match(text, start)
        if m:
            yield m


def _named_from(m: re.Match[str]) -> str | None:
    rest = m.group("rest").strip()
    acro = _ACRO_LONG_RE.match(rest)
    if acro:
        return f"{acro.group('acro')}: {acro.group('long').strip()}"
    long = _LONG_ACRO_RE.match(rest)
    if long and _coined(long.group("acro")):
        expansion = _expansion(long.group("long").split(), long.group("acro"))
        # a named contribution is capitalised; "Markov decision processes (MDPs)" is a term
        if expansion and _mostly_capitalised(expansion):
            return f"{long.group('acro')}: {expansion}"
    named = _NAME_RE.match(rest)
    if (named and _coined(named.group("name"))) or (named and len(named.group("name").split()) == 1):
        desc = named.group("desc").strip()
        return f"{named.group('name')}: {desc}"
    return None


def derive_title(abstract: str, limit: int = MAX_TITLE, plain: str | None = None) -> str:
    """A short readable title from an abstract (plain text, no markup).

    `plain` is `plain_text(abstract)` when the caller has it already.
    """
    text = plain if plain is not None else plain_text(abstract)
    if not text:
        return "Untitled paper"
    # a contribution is usually named within the first few sentences; the
    # lead pattern stops at sentence ends, so one scan of the opening will do
    for m in _lead_matches(text, 1500):
        named = _named_from(m)
        if named:
            return _capitalise(shorten(named, limit))
    opening = _LEADING_FLUFF_RE.sub("", first_sentence(text))
    return _capitalise(shorten(opening, limit))


def _capitalise(title: str) -> str:
    return title[:1].upper() + title[1:] if title else title
