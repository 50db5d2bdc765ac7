"""Whether a record a service found is the paper we have: pure functions, no network.

Most papers of a listing have an abstract and a title derived from it, so the abstract is
what identifies a paper. An arXiv v1 and the published version of one paper differ in line
breaks, LaTeX against Unicode, markup (JATS tags, Markdown), a reworded sentence, an added
sentence; a different paper on the same topic shares many words but few word sequences.
So `abstract_similarity` weighs overlapping word sequences (3-word shingles, counted
against the shorter text so that an added sentence costs little) above a cosine of the
content words. Measured on the seed replay set (tests/fixtures/metadata/seeds) and the
recorded real responses: true versions score 0.75–1.0, different papers of the same topic
(the decoys) 0.05–0.3; see tests/test_matching.py.

A similarity counted against the shorter text cannot tell a short or truncated abstract (or
a common opening sentence) from the paper it opens: so a match is automatic only when the
abstracts share at least SHARED_FOR_AUTO sequences and these cover LONGER_COVERED_FOR_AUTO of
the longer one too; below that it is at most proposed. Function words of English, German,
French and Spanish are no evidence; a placeholder ("No abstract available.") is no abstract.

`score` turns one candidate into a confidence and the reasons for it: the abstract decides;
the title (only when ours is not derived from the abstract), the author surnames and the
year raise or lower it. A candidate whose title agrees with ours while its abstract is
another paper's is a decoy: never above PROPOSE_CONFIDENCE.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from ..biblio.names import family_key
from ..render import plain_text
from ..text import fold

if TYPE_CHECKING:
    from ..paper import Paper
    from .records import FoundRecord

AUTO_CONFIDENCE = 0.85
"""At or above this a look-up's changes may be applied without asking (fields we lack)."""
PROPOSE_CONFIDENCE = 0.5
"""At or above this a candidate is proposed to the user; below it nothing is proposed."""

# an abstract similarity at or above this is the same paper; below DIFFERENT it is another
ABSTRACT_MATCH = 0.6
ABSTRACT_DIFFERENT = 0.35
TITLE_MATCH = 0.85
# a match is automatic only when the abstracts share at least this many 3-word sequences (a
# sentence or two proves little, in any language) and the shared ones cover at least this
# share of the longer abstract (a truncated abstract of ours, or a common opening sentence,
# fits many papers); measured on the seed replay set and the recorded answers, true versions
# share 79–198 sequences and cover 0.65 (an arXiv preprint with two more sentences) to 1.0
SHARED_FOR_AUTO = 20
LONGER_COVERED_FOR_AUTO = 0.6

_TAG_RE = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>")  # JATS/HTML tags
_WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_LEADING_ABSTRACT_RE = re.compile(r"^\s*(?:abstract|summary)\b[\s.:—–-]*", re.I)
# what a service (or an export) puts where it has no abstract: no abstract at all
_PLACEHOLDER_RE = re.compile(
    r"^(?:(?:this (?:article|paper|chapter|item|record) (?:has|contains) )?no abstract(?: is)?(?: available)?"
    r"(?: for this (?:article|paper|item|record))?|abstract(?: is)? (?:not|un)available|not available|"
    r"n/?a|none|null|abstract|summary|no summary(?: available)?|\[?abstract not available\]?|-+)$"
)

# fmt: off
# English, then German, French and Spanish (abstracts in those languages: their function words
# are no evidence; words that are also English terms, such as "meme", "ser", "algo", left out);
# both as written and folded (accents gone), as `words` gives them
_STOP_TEXT = """
a about above across after again against all almost also although always am among an and any
are as at be because been before being below between both but by can could did do does doing
done down during each either else even ever every few for from further had has have having he
her here hers him his how however i if in into is it its itself just least less let like made
make makes many may me might more most much must my neither no nor not now of off often on once
one only or other others otherwise our ours out over own per rather same she should since so
some such than that the their theirs them themselves then there these they this those though
through thus to too toward towards under until up upon us very via was we well were what when
where whereas whether which while who whom whose why will with within without would yet you
your
aber alle als also am an auch auf aus bei bin bis bist da dadurch daher darum das dass dein
deine dem den der des dessen dich die dies diese diesem diesen dieser dieses dir doch dort du
durch ein eine einem einen einer eines er es euer eure für hatte hatten hier hinter ich ihr
ihre im in ist ja jede jedem jeden jeder jedes jener jenes jetzt kann kannst können könnt
machen mein meine mit muss musst müssen müsst nach nachdem nein nicht nun oder seid sein seine
sich sie sind soll sollen sollst sollt sonst soweit sowie und unser unsere unter vom von vor
wann warum was weiter weitere wenn wer werde werden werdet weshalb wie wieder wieso wir wird
wirst wo woher wohin zu zum zur wurde wurden zeigen zeigt untersuchen
au aux avec ces cet cette dans de des du elle elles en est et eux il ils je la le les leur
leurs lui ma mais me mes moi mon ne nos notre nous on ou où par pas pour qu que qui sa se
ses sont sur ta te tes toi tu un une vos votre vous été être avons ont était sont
ainsi aussi comme dont entre sans selon sous très cela ceci nous montrons proposons
algunas algunos ante antes como con contra cual cuando del desde donde durante el
ella ellas ellos entre es esa esas ese eso esos esta estas este esto estos ha hay la las
lo los mi muy nada ni no nos nosotros o otra otras otro otros para pero poco por porque
que quien se sobre su sus también tanto te tiene tienen todo todos tu un una uno
unos y ya fue está están cada proponemos mostramos
"""
STOP_WORDS = frozenset(w for word in _STOP_TEXT.split() for w in (word, fold(word)))
# words every abstract uses: never distinctive on their own
COMMON_WORDS = frozenset("""
abstract accuracy achieve achieves address addresses algorithm algorithms analysis approach
approaches based benchmark benchmarks better challenge challenges code compared competitive
consistent current data dataset datasets demonstrate demonstrates design different effective
efficient empirical evaluate evaluation evaluations existing experiment experiments extensive
framework frameworks further furthermore general high however improve improved improvement
improvements improves including introduce key large learning limited low method methods model
models new novel outperforms paper performance present problem problems propose proposed
provide provides range recent result results set show shows significant significantly simple
state study task tasks technique techniques theoretical training two use used uses using various
way work works across available release released publicly first second leverages leverage
""".split())
# fmt: on


def words(text: str) -> list[str]:
    """The words of a text as a reader sees them, folded: LaTeX, Markdown and JATS/HTML tags
    gone, hyphens and dashes split ("solver–LLM" → solver, llm), a leading "Abstract" dropped."""
    if "<" in text:
        text = _TAG_RE.sub(" ", text)
    text = _LEADING_ABSTRACT_RE.sub("", plain_text(text))
    return _WORD_RE.findall(fold(text).replace("’", "'"))


def _shingles(tokens: list[str], k: int = 3) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + k]) for i in range(len(tokens) - k + 1)}


def _cosine(a: list[str], b: list[str]) -> float:
    ca = Counter(w for w in a if w not in STOP_WORDS)
    cb = Counter(w for w in b if w not in STOP_WORDS)
    if not ca or not cb:
        return 0.0
    dot = sum(n * cb[w] for w, n in ca.items() if w in cb)
    return dot / math.sqrt(sum(n * n for n in ca.values()) * sum(n * n for n in cb.values()))


def real_abstract(text: str) -> str:
    """`text`, or "" when it is a placeholder a service gives for no abstract ("No abstract
    available.", "N/A", "[Abstract not available]")."""
    folded = " ".join(fold(plain_text(text)).replace(".", " ").split()).strip(" :;,[]()")
    return "" if not folded or _PLACEHOLDER_RE.match(folded) else text


def abstract_overlap(a: str, b: str) -> tuple[int, float]:
    """How many 3-word sequences two abstracts share, and the share of the LONGER one's that
    they are: a short or truncated abstract, or a common opening sentence, is covered by many
    papers' abstracts, but covers only a small part of them."""
    sa, sb = _shingles(words(a)), _shingles(words(b))
    shared = len(sa & sb)
    longer = max(len(sa), len(sb))
    return shared, (shared / longer if longer else 0.0)


def abstract_similarity(a: str, b: str) -> float:
    """How surely two abstracts are versions of one paper, 0..1.

    Robust to markup (LaTeX, JATS, Markdown), case, accents, line breaks and punctuation; a
    reworded or an added sentence lowers it a little. 0.7 × the share of the shorter text's
    3-word shingles found in the other + 0.3 × the cosine of their content words. A short
    text (under 12 shingles) leans on the cosine, which is then scaled down: two sentences
    are weak evidence.
    """
    ta, tb = words(a), words(b)
    if not ta or not tb:
        return 0.0
    sa, sb = _shingles(ta), _shingles(tb)
    cos = _cosine(ta, tb)
    shorter = min(len(sa), len(sb))
    if shorter == 0:
        return 0.5 * cos
    contained = len(sa & sb) / shorter
    sim = 0.7 * contained + 0.3 * cos
    if shorter < 12:
        sim *= 0.5 + shorter / 24
    return max(0.0, min(1.0, sim))


def title_similarity(a: str, b: str) -> float:
    """How alike two titles are, 0..1, on their folded words (markup and punctuation gone)."""
    wa, wb = words(a), words(b)
    if not wa or not wb:
        return 0.0
    return SequenceMatcher(None, wa, wb, autojunk=False).ratio()


def _coined(word: str) -> bool:
    """A made-up name: a digit or a capital after the first letter (VeriSimpl, GPT-4)."""
    return any(c.isdigit() for c in word) or any(c.isupper() for c in word[1:])


def title_in_abstract(title: str, abstract: str) -> float:
    """The share of a title's content words found in an abstract (0 for a title of fewer than
    four content words: too little to tell a paper by)."""
    content = {w for w in words(title) if w not in STOP_WORDS}
    if len(content) < 4:
        return 0.0
    return len(content & set(words(abstract))) / len(content)


def _word_weight(word: str) -> float:
    """How much a word (as written) tells this paper apart: a coined name (VeriSimpl,
    DPLM-Evo, GPT-4) most, a long uncommon word more than a short or common one."""
    low = word.casefold()
    if low in STOP_WORDS:
        return 0.0
    core = word.strip("-")
    weight = 3.0 if _coined(core) else 1.0 + min(max(len(core) - 5, 0), 6) / 4
    if "-" in core:
        weight += 0.5
    if low in COMMON_WORDS:
        weight = 0.3
    return weight


_TEXT_MACRO_RE = re.compile(r"\\(?:textsc|textbf|textit|emph|texttt|textrm|textsf|mathrm)\{([^{}]*)\}")
# "NP-hard", "3D-aware": a common prefix, not a name
_PREFIXED_RE = re.compile(r"^(?:[A-Z]{1,3}|\d[A-Za-z]?)-[a-z]+$")
_PHRASE_WORD_RE = re.compile(r"[^\W_](?:\w|-(?=[^\W_]))*")
_URL_RE = re.compile(r"\b(?:https?://|www\.)\S+", re.I)
_BREAK_RE = re.compile(r"[.,;:!?()\[\]{}\"“”‘’'$\\/|=<>+*%&#@~^`]|\s-+\s|--+|[–—]")


def distinctive_phrases(abstract: str, n: int = 3) -> list[str]:
    """Up to `n` phrases of 2–4 consecutive content words that tell this abstract apart
    (a named method, long uncommon words), best first, sharing no word with each other.

    The words are taken as written in the raw abstract between punctuation and markup, so
    that a phrase search (arXiv's `abs:"…"`) finds them in the service's own copy: a phrase
    never spans a LaTeX macro, a formula, a comma or a stop word.
    """
    # a text macro's argument is text (\\textsc{VeriSimpl}); other macros and math break phrases
    raw = _TEXT_MACRO_RE.sub(r"\1", abstract)
    raw = re.sub(r"\$[^$]*\$|\\[A-Za-z]+\*?|\\.|[{}]", " | ", raw)
    raw = _TAG_RE.sub(" | ", _URL_RE.sub(" | ", raw))
    found: dict[str, float] = {}
    order: dict[str, int] = {}
    for chunk in _BREAK_RE.split(raw):
        run: list[str] = []
        for token in _PHRASE_WORD_RE.findall(chunk) + [""]:
            # an apostrophe ("RL's", "LMs'") is spelt differently by every copy: it ends a phrase,
            # and the "s" after it is no word
            if len(token) > 1 and token.casefold() not in STOP_WORDS and not token.isdigit():
                run.append(token)
                continue
            # a coined name alone (VeriSimpl, DPLM-Evo) is a phrase too
            for size in (4, 3, 2, 1):
                for i in range(len(run) - size + 1):
                    ws = run[i : i + size]
                    weights = [_word_weight(w) for w in ws]
                    if min(weights) < 0.3 or sum(w >= 1.0 for w in weights) < min(size, 2):
                        continue
                    # longer phrases are rarer but more fragile (a reworded word breaks them)
                    value = sum(weights) / (1 + 0.35 * (size - 2))
                    if size == 1:
                        if not any(c.isupper() for c in ws[0][1:]) or len(ws[0]) < 5 or _PREFIXED_RE.match(ws[0]):
                            continue
                        value = 1.6 * weights[0]
                    phrase = " ".join(ws)
                    if value > found.get(phrase, 0):
                        found[phrase] = value
                        order.setdefault(phrase, len(order))
            run = []
    best = sorted(found, key=lambda p: (-found[p], order[p]))
    chosen: list[str] = []
    used: set[str] = set()
    for phrase in best:
        folded = {w.casefold() for w in phrase.split()}
        if folded & used:
            continue
        chosen.append(phrase)
        used |= folded
        if len(chosen) == n:
            break
    return chosen


def arxiv_query(abstract: str, phrases: int = 2) -> str:
    """arXiv's search_query for a paper by its abstract: `abs:"one" AND abs:"two"` with the
    most distinctive phrases ("" when the abstract has none)."""
    chosen = distinctive_phrases(abstract, max(phrases, 1))
    return " AND ".join(f'abs:"{p}"' for p in chosen[:phrases])


def search_text(paper: Paper, limit: int = 12) -> str:
    """The words to send to a bibliographic text search (Crossref, OpenAlex, Semantic
    Scholar): our title when it is a real one, else the abstract's distinctive phrases."""
    if paper.title and not paper.title_derived:
        text = plain_text(paper.title)
    else:
        text = " ".join(distinctive_phrases(real_abstract(paper.abstract), 4))
        if not text:
            text = plain_text(paper.title)
    return " ".join(text.split()[:limit])


def author_overlap(ours: list[str], theirs: list[str]) -> float | None:
    """The share of our authors' surnames the candidate has (None when either has none)."""
    a = {s for s in (family_key(plain_text(n)) for n in ours) if s}
    b = {s for s in (family_key(plain_text(n)) for n in theirs) if s}
    if not a or not b:
        return None
    return len(a & b) / len(a)


def score(paper: Paper, rec: FoundRecord) -> tuple[float, list[str]]:
    """How surely `rec` is `paper` (0..1), and the reasons, for the user to read.

    The abstract match dominates: a match starts at 0.8–1.0, a different abstract at 0.1.
    Title agreement counts only when our title is not derived from the abstract; author
    surnames and year agreement raise or lower the result. Without the candidate's (or our)
    abstract, the title and the authors must both agree, and then it is at most proposed (a
    derived title of ours agrees when the candidate's title words are in our abstract).
    A candidate whose title agrees with ours but whose abstract is another paper is a decoy:
    held below PROPOSE_CONFIDENCE whatever else agrees.
    """
    reasons: list[str] = []
    title_sim: float | None = None
    if paper.title and not paper.title_derived and rec.title:
        title_sim = title_similarity(paper.title, rec.title)
    authors = author_overlap(paper.authors, rec.authors)
    ours_abstract, their_abstract = real_abstract(paper.abstract), real_abstract(rec.abstract)
    abs_sim = abstract_similarity(ours_abstract, their_abstract) if ours_abstract and their_abstract else None
    decoy = False
    if abs_sim is not None:
        conf, decoy = _by_abstract(abs_sim, title_sim, authors, reasons)
    else:
        conf = _without_abstract(paper, rec, title_sim, authors, reasons)
    conf += _title_weight(title_sim, reasons)  # one by one, in this order: the same sums to the last bit
    conf += _authors_weight(authors, reasons)
    conf += _year_weight(paper, rec, reasons)
    if abs_sim is None:
        conf = min(conf, AUTO_CONFIDENCE - 0.05)  # without an abstract: proposed, never automatic
    partial = _partial_match(ours_abstract, their_abstract, abs_sim)
    if partial:
        reasons.append(partial + ": review it")
        conf = min(conf, AUTO_CONFIDENCE - 0.05)
    if decoy:
        reasons.append("a different paper that looks like ours: rejected")
        conf = min(conf, PROPOSE_CONFIDENCE - 0.2)
    return max(0.0, min(1.0, conf)), reasons


def _partial_match(ours: str, theirs: str, abs_sim: float | None) -> str:
    """Why abstracts that match are still not sure enough ("" when they are, or do not match)."""
    if abs_sim is None or abs_sim < ABSTRACT_MATCH:
        return ""
    shared, longer_covered = abstract_overlap(ours, theirs)
    if shared < SHARED_FOR_AUTO:
        return "the abstracts are too short to be sure"
    if longer_covered < LONGER_COVERED_FOR_AUTO:
        return f"only {longer_covered:.0%} of the longer abstract is in the other (a short or cut abstract)"
    return ""


def _by_abstract(
    abs_sim: float, title_sim: float | None, authors: float | None, reasons: list[str]
) -> tuple[float, bool]:
    """The confidence the abstracts give, and whether the candidate is a decoy (another
    paper's abstract under our title or our authors)."""
    if abs_sim >= ABSTRACT_MATCH:
        reasons.append(f"the abstract matches ({abs_sim:.0%})")
        return 0.8 + 0.2 * (abs_sim - ABSTRACT_MATCH) / (1 - ABSTRACT_MATCH), False
    if abs_sim >= ABSTRACT_DIFFERENT:
        reasons.append(f"the abstract is only partly alike ({abs_sim:.0%})")
        return 0.45 + 0.3 * (abs_sim - ABSTRACT_DIFFERENT) / (ABSTRACT_MATCH - ABSTRACT_DIFFERENT), False
    reasons.append(f"the abstract is a different paper's ({abs_sim:.0%} alike)")
    decoy = (title_sim is not None and title_sim >= TITLE_MATCH) or (authors is not None and authors >= 0.5)
    return 0.1, decoy


def _without_abstract(
    paper: Paper, rec: FoundRecord, title_sim: float | None, authors: float | None, reasons: list[str]
) -> float:
    """The confidence without two abstracts to compare: the title and the authors must agree."""
    reasons.append("no abstract to compare")
    title_ok = title_sim is not None and title_sim >= TITLE_MATCH
    ours_abstract = real_abstract(paper.abstract)
    if title_sim is None and paper.title_derived and ours_abstract and rec.title:
        # our title is made from the abstract: the candidate's title must be told by it
        told = title_in_abstract(rec.title, ours_abstract)
        if told >= 0.8:
            reasons.append(f"the title's words are in our abstract ({told:.0%})")
            title_ok = True
    if title_ok and authors is not None and authors >= 0.5:
        return 0.55 + 0.1 * authors
    return 0.4 if title_ok else 0.3


def _title_weight(title_sim: float | None, reasons: list[str]) -> float:
    """What our (real) title's agreement adds or takes away."""
    if title_sim is None:
        return 0.0
    if title_sim >= TITLE_MATCH:
        reasons.append("the title agrees")
        return 0.03
    if title_sim < 0.5:
        reasons.append("the title differs")
        return -0.15
    return 0.0


def _authors_weight(authors: float | None, reasons: list[str]) -> float:
    """What the authors' agreement (the share of our surnames the candidate has) adds or takes away."""
    if authors is None:
        return 0.0
    if authors >= 0.5:
        reasons.append(f"authors agree ({authors:.0%} of ours)")
        return 0.05
    if authors == 0:
        reasons.append("no author in common")
        return -0.3
    reasons.append(f"few authors in common ({authors:.0%} of ours)")
    return -0.1


def _year_weight(paper: Paper, rec: FoundRecord, reasons: list[str]) -> float:
    """What the years' agreement adds or takes away."""
    if not (paper.year and rec.year):
        return 0.0
    gap = abs(paper.year - rec.year)
    if gap <= 1:
        return 0.02
    reasons.append(f"the year differs ({rec.year} against our {paper.year})")
    return -0.1 if gap <= 3 else -0.25
