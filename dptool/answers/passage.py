"""Reading a knowledge text (a gold passage or an answer): its words, the numbers and dates it states and where,
its sentences, and the polarity of what it says near each of them ("more than 60 days … excluded").

Polarity is read from a small lexicon of rule words, each of a family and a side: include/exclude (counted,
kept, removed, dropped …), apply, eligible (allowed, compliant …), use, satisfied, override; a negation ("not",
"never", "no longer", "non-", "rather than") flips the first of them after it. A number's own comparator is read
right before it ("more than", "at least", "no later than", "before", "within the first") or right after it
("or more"). Nothing here understands a sentence: it finds the words an inverted rule must change.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from dptool.answers.dates import date_spans
from dptool.answers.numbers import number_spans, prepare
from dptool.answers.verdict import fold_text

_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
          "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = {w: 10 * i for i, w in enumerate(
    ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]) if w}
NUMBER_WORDS = {**{w: i for i, w in enumerate(_UNITS)}, **_TENS, "hundred": 100, "thousand": 1000}
STOPWORDS = frozenset(["a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "from", "with", "and", "or",
                       "is", "are", "was", "were", "be", "been", "being", "as", "that", "this", "these", "those",
                       "it", "its", "than", "then", "which", "who", "whom", "into", "per", "our", "their"])
# "1. …", "[2]", and a bullet ("- 60 days …": no minus)
_MARKERS = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?\d+[.)][ \t]+|\[\d+\]|^[ \t]*[-*+\u2022][ \t]+", re.MULTILINE)
# words, the ends of sentences (not the point of "3.0", blanked before) and the brackets and dashes of an aside
_TOKEN = re.compile(r"[a-z]+|[<>≤≥]=?|[.!?;:](?=\s|$|\*)|\n|[(),\[\]]|\u2014|(?<=\s)[\u2013-](?=\s)")
_SENTENCE_END = frozenset(".!?;\n")  # not ":", read by clauses only
# a comma before one of these starts another clause, which says its own thing: "…, and 1993 was restated"
_CLAUSE_WORDS = frozenset(["and", "but", "while", "whereas", "although", "though", "so", "yet", "unless", "except"])

# the rule words: (family, side)
_POLAR: dict[str, tuple[str, int]] = {}
for _family, _plus, _minus in [
    ("include", "include included includes including inclusive count counted counts counting kept keep keeps "
                "keeping retain retained retains retaining",
     "exclude excluded excludes excluding exclusive removed remove removes removing drop dropped drops dropping "
     "omit omitted omits omitting ignore ignored ignores ignoring discard discarded discards discarding disregard "
     "disregarded disregarding deleted delete"),
    ("apply", "apply applies applied applying applicable", "exempt exempted inapplicable"),
    ("eligible", "eligible allowed permitted qualify qualifies qualified compliant accepted valid validated",
     "ineligible forbidden prohibited noncompliant disqualified rejected invalid"),
    ("publish", "published publish publishes shown show shows displayed reported report reports appear appears",
     "suppressed suppress suppresses withheld withhold withholds hidden hide hides"),
    ("use", "use used uses using", "unused"),
    ("satisfied", "satisfied", "unsatisfied dissatisfied"),
    ("override", "override overrides overrode overridden overriding replace replaces replaced replacing supersede "
                 "supersedes superseded superseding", ""),
]:
    _POLAR.update({w: (_family, 1) for w in _plus.split()})
    _POLAR.update({w: (_family, -1) for w in _minus.split()})
_UP, _DOWN, _EQUAL = 1, -1, 0


def _lexicon(words: str) -> list[str]:
    return words.split()


_DIRECTION = {
    **{w: _UP for w in _lexicon("more over above exceeding exceeds exceed exceeded greater higher longer later after "
                                "beyond least minimum older")},
    **{w: _DOWN for w in _lexicon("less fewer under below lower shorter earlier before within prior first maximum "
                                  "younger")},
    **{w: _EQUAL for w in _lexicon("exactly equal equals")},
    **{w: _UP for w in _lexicon("> >= ≥")}, **{w: _DOWN for w in _lexicon("< <= ≤")}}  # "≤ 60" is "at most 60"
# what stands before a date that starts or ends a rule: "effective 1 January 2017", "until 1 January 2017"
_START = {**{w: 1 for w in _lexicon("effective from since starting beginning")},
          **{w: -1 for w in _lexicon("until till ending expiring")}}
_NEGATIONS = frozenset(_lexicon("not no never none neither nor without non cannot doesn isn aren don didn wasn weren "
                                "won hasn haven hadn shouldn mustn"))
_ADDING = ("add", "adds", "added", "adding")
# two words read as one: (first, second) -> what they are
_PHRASES = {("no", "longer"): "not", ("rather", "than"): "not", ("instead", "of"): "not", ("up", "to"): "within",
            ("at", "most"): "maximum", ("as", "of"): "from", ("at", "least"): "least", ("or", "more"): "more",
            ("or", "less"): "less",
            ("or", "fewer"): "less", ("or", "longer"): "more", ("or", "later"): "more", ("or", "earlier"): "less",
            ("or", "above"): "more", ("or", "below"): "less", ("and", "above"): "more", ("and", "over"): "more",
            ("and", "below"): "less", ("and", "under"): "less", ("prior", "to"): "before",
            **{("or", w): "more" for w in ("over", "older", "greater", "higher", "after", "beyond")},
            **{("or", w): "less" for w in ("under", "younger", "lower", "before", "shorter")},
            # "stays junior" says nothing of the rule, "stays in the average" does
            **{(verb, "in"): "included" for verb in ("stay", "stays", "stayed", "staying", "remain", "remains",
                                                     "remained", "remaining")},
            **{(verb, "out"): "excluded" for verb in ("left", "leave", "leaves", "leaving", "kept", "keep", "keeps")},
            # "are added to the average" says included; "added" alone ("added in 2019") says nothing of the rule, nor
            # does a number added ("50 is added to the month": arithmetic, _arithmetic)
            **{(verb, "to"): "included" for verb in _ADDING}}
_OBJECT_PREPOSITIONS = frozenset(["to", "in", "for", "on"])
_AFTER = frozenset(w for (first, _), w in _PHRASES.items() if first in ("or", "and"))  # "30 days or more"
_SKIPPED = frozenset(["than", "the", "strictly", "of", "a", "an", "that", "is", "are", "to"])


@dataclass(frozen=True)
class Claim:
    """A date, month or number a text states, where it stands, and what it may mean."""

    start: int
    end: int
    means: frozenset  # dates, (year, month) pairs or floats: "01/02/2018" may mean two days
    percent: bool = False  # "20%": also the share 0.2


@dataclass
class Token:
    """A word or a claim of a text, with its sentence and the aside (brackets, dashes) it stands in (0: none)."""

    word: str  # "" for a claim
    start: int
    end: int
    sentence: int
    aside: int
    clause: int  # the sentence, or in an answer read by clauses the part of it after a ":" or ", and"
    claim: Claim | None = None
    polar: tuple[str, int] | None = None  # (family, side) after its negation, for a rule word
    reads: str = ""  # the word as the rule lexicon reads it: "at least" is "least" then ""


@dataclass
class Reading:
    """A knowledge text read once: its folded text, its tokens in order, its claims."""

    text: str
    tokens: list[Token]
    claims: list[Claim] = field(default_factory=list)


@functools.lru_cache(maxsize=1024)  # a passage and its facts are read for every answer to its task: once is enough
def read(text: str, *, clauses: bool = False) -> Reading:
    """The tokens and claims of a text (numbered-list markers and citation marks are no claims, nor are the
    parts of a date). `clauses`: a comma before "and", "but" … ends a sentence too (an answer's "…, and 1993 was
    restated" says its own thing; a passage's "below 30,000 CZK, and every other posting, is included" does not
    split: read wide, a passage agrees more often, never less)."""
    folded = _MARKERS.sub(lambda m: " " * len(m.group(0)), fold_text(prepare(text)))
    spans, rest = date_spans(folded)
    claims = [Claim(a, b, found) for a, b, found in spans]
    for s in number_spans(rest):
        claims.append(Claim(s.start, s.end, frozenset({s.num.value}), s.num.percent))
        rest = rest[:s.start] + " " * (s.end - s.start) + rest[s.end:]
    words = [(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(rest) if m.group(0) not in "\u2013-"
             or (folded[m.start() - 1:m.start()].isspace() and folded[m.end():m.end() + 1].isspace())]
    claims += _word_number_claims(words)
    claims.sort(key=lambda c: c.start)
    events = sorted([(c.start, c.end, "", c) for c in claims] +
                    [(a, b, w, None) for a, b, w in words if w not in NUMBER_WORDS], key=lambda e: e[0])
    tokens, sentence, clause, asides, dash, count = [], 0, 0, [], 0, 0
    for k, (start, end, word, claim) in enumerate(events):
        if word in (",", ":"):
            if clauses and (word == ":" or (k + 1 < len(events) and events[k + 1][2] in _CLAUSE_WORDS)):
                clause += 1
            continue
        if word in _SENTENCE_END:
            sentence, clause, asides, dash = sentence + 1, clause + 1, [], 0
            continue
        if word in ("(", "["):
            count += 1
            asides.append(count)
            continue
        if word in (")", "]"):
            asides = asides[:-1]
            continue
        if word in ("\u2013", "\u2014", "-"):
            count += 1
            dash = 0 if dash else count
            continue
        tokens.append(Token(word, start, end, sentence, asides[-1] if asides else dash, clause, claim))
    _mark_polarity(tokens)
    return Reading(folded, tokens, claims)


def _word_number_claims(words: list[tuple[int, int, str]]) -> list[Claim]:
    """Numbers spelled out in words, with their place: "sixty" 60, "twenty-four" 24, "one hundred" 100."""
    out: list[Claim] = []
    total = current = 0
    start = end = -1
    for a, b, w in [*words, (-1, -1, "")]:
        if w in NUMBER_WORDS:
            n = NUMBER_WORDS[w]
            if n == 100:
                current = max(current, 1) * 100
            elif n == 1000:
                total, current = total + max(current, 1) * 1000, 0
            else:
                current += n
            start, end = (a if start < 0 else start), b
        elif start >= 0 and not (w == "and" and current >= 100):  # "one hundred and five"
            out.append(Claim(start, end, frozenset({float(total + current)})))
            total = current = 0
            start = end = -1
    return out


def _read_phrases(tokens: list[Token]) -> None:
    i = 0
    while i < len(tokens):
        t = tokens[i]
        pair = (t.word, tokens[i + 1].word) if i + 1 < len(tokens) else None
        if pair in _PHRASES and tokens[i + 1].sentence == t.sentence and not _arithmetic(tokens, i):
            t.reads, tokens[i + 1].reads = _PHRASES[pair], ""
            i += 2
        else:
            t.reads = t.word
            i += 1


def _arithmetic(tokens: list[Token], i: int) -> bool:
    """Is tokens[i] the "added" of a number added to something ("50 is added to the month", "with 50 added to")?"""
    return tokens[i].word in _ADDING and any(u.claim is not None and u.sentence == tokens[i].sentence
                                             for u in tokens[max(0, i - 2):i])


def _negation(t: Token) -> bool:
    return t.reads == "not" or t.reads in _NEGATIONS


def _mark_polarity(tokens: list[Token]) -> None:
    _read_phrases(tokens)
    negated_at = -10
    taken = -1  # a "no" that negated the rule word before it ("applies to no region") negates nothing after
    for i, t in enumerate(tokens):
        if _negation(t):
            if i != taken:
                negated_at = i
        elif t.reads in _DIRECTION:
            negated_at = -10  # "no later than": the negation is the comparator's
        elif t.reads in _POLAR:
            family, side = _POLAR[t.reads]
            if i - negated_at <= 3 and tokens[negated_at].sentence == t.sentence:
                side, negated_at = -side, -10  # a negation flips the first rule word after it
            elif _negated_object(tokens, i):
                side, taken = -side, i + 2
            t.polar = (family, side)


def _negated_object(tokens: list[Token], i: int) -> bool:
    """Does "no" or "none" stand as the object of the rule word at tokens[i]: "applies to no region", "is included
    in none of the reports" (not "applies to no more than 60 days": that negation is the comparator's)?"""
    if i + 2 >= len(tokens) or tokens[i + 1].reads not in _OBJECT_PREPOSITIONS or \
            tokens[i + 2].reads not in ("no", "none") or tokens[i + 2].sentence != tokens[i].sentence:
        return False
    return i + 3 >= len(tokens) or tokens[i + 3].reads not in _DIRECTION


def comparator(tokens: list[Token], i: int) -> int | None:
    """The direction the claim at tokens[i] is bounded in: up ("more than 60", "at least 3.0", "60 or more",
    "after 1 July"), down ("below 3.0", "no later than one day", "within the first 30"), equal ("exactly 60"),
    None when no comparator stands next to it."""
    word, j = _before(tokens, i, _DIRECTION)
    if word is not None:
        side = _DIRECTION[word]
        return -side if any(_negation(tokens[k]) for k in range(max(0, j - 2), j)) else side
    for k in range(i + 1, min(len(tokens), i + 5)):  # "30 days or more"
        t = tokens[k]
        if t.sentence != tokens[i].sentence or t.claim is not None:
            break
        if t.word in ("or", "and") and t.reads in _AFTER:
            return _DIRECTION[t.reads]
    return None


def _before(tokens: list[Token], i: int, words: dict) -> tuple[str | None, int]:
    """The first of `words` among the four words before the claim at tokens[i] ("than", "the" … skipped)."""
    claim = tokens[i].claim
    j, steps = i - 1, 0
    while j >= 0 and steps < 4 and tokens[j].sentence == tokens[i].sentence:
        t = tokens[j]
        if t.claim is not None and t.claim.means != claim.means:
            break  # "above 0.6) / 3": the comparator is 0.6's
        if t.claim is not None or t.word in _SKIPPED or not t.reads:
            j -= 1
            continue
        if t.reads in words:
            return t.reads, j
        j, steps = j - 1, steps + 1
    return None, -1


def signature(reading: Reading, i: int) -> dict[str, set[int]]:
    """What a text says near the claim at tokens[i]: the sides of each rule-word family in its sentence (its
    clause, for an answer read by clauses; only the aside it stands in and the sentence around it, no other
    aside), and its comparator. A date (or a year) says when: of the families only "apply", and whether it starts
    the rule ("effective", "since") or ends it ("until")."""
    t = reading.tokens[i]
    dated = all(not isinstance(x, float) or (x.is_integer() and 1900 <= x <= 2100) for x in t.claim.means)
    out: dict[str, set[int]] = {}
    for u in reading.tokens:
        if u.clause != t.clause or u.polar is None or (dated and u.polar[0] != "apply"):
            continue
        if u.aside and u.aside != t.aside:
            continue  # another aside speaks of something else: "(the opening deposit included)"
        out.setdefault(u.polar[0], set()).add(u.polar[1])
    side = comparator(reading.tokens, i)
    if side is not None:
        out["comparator"] = {side}
    if dated:
        word, _ = _before(reading.tokens, i, _START)
        if word is not None:
            out["start"] = {_START[word]}
    return out


def date_side(reading: Reading, i: int, comparators: bool = True) -> int | None:
    """Which side of the date at tokens[i] a text speaks of: 1 from it on ("effective", "since", and with
    `comparators` "on or after", "no earlier than"), -1 up to it ("until", and "before", "prior to"), None when
    no word says."""
    word, at = _before(reading.tokens, i, _START)
    if word is not None and _before(reading.tokens, i, _DIRECTION)[1] < at:  # the nearer says: "from X or before X"
        return _START[word]
    if not comparators:
        return None
    side = comparator(reading.tokens, i)
    return None if side in (None, _EQUAL) else side


def rule_word(word: str) -> str | None:
    """The family of a rule word ("dropped" and "excluded" are both "include"), or the side of a comparator
    ("longer" and "more" are both "up"), or None."""
    if word in _POLAR:
        return _POLAR[word][0]
    if word in _DIRECTION:
        return {_UP: "up", _DOWN: "down", _EQUAL: "equal"}[_DIRECTION[word]]
    return None


def negated(reading: Reading, i: int) -> bool:
    """Whether the word at tokens[i] is negated: a negation stands before it, with no other content word between
    ("is not counted", "never count", "not the record itself" negates "record", not "itself")."""
    tokens = reading.tokens
    for k in range(i - 1, max(-1, i - 4), -1):
        t = tokens[k]
        if t.sentence != tokens[i].sentence:
            return False
        if _negation(t):
            return True
        if t.word not in STOPWORDS and t.reads:
            return False
    return False


def sentence_of(reading: Reading, i: int) -> str:
    """The sentence the token at tokens[i] stands in, as written (folded), at most 120 characters around it."""
    tokens = [t for t in reading.tokens if t.sentence == reading.tokens[i].sentence]
    start, end = tokens[0].start, tokens[-1].end
    at = reading.tokens[i].start
    if end - start > 120:
        start, end = max(start, at - 60), min(end, at + 60)
    return " ".join(reading.text[start:end].split())


__all__ = ["NUMBER_WORDS", "STOPWORDS", "Claim", "Reading", "Token", "comparator", "date_side", "negated", "read",
           "rule_word", "sentence_of", "signature"]
