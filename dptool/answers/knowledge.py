"""The knowledge comparator: an answer must state every key fact of its gold passage, in words that carry its
meaning, precisely, and without inverting the rule (README, "How answers are compared").

In order, an answer is wrong when it is
- too long (a pasted kb): more than max(150, 3 × the passage's) words;
- missing a key fact: numbers compared as numbers ("60 days" ~ "sixty (60) days" ~ "60-day"), dates in any
  common format, words by their stem;
- hedged: more numbers and dates foreign to the passage and question than from them (two always allowed), an
  alternative to a key fact ("30 or 60", "30/60 days", "thirty or sixty", "30 days (maybe 60)", "30–60 days"
  where the passage states one), an approximate key fact ("about 30 days"), two sides of one rule ("excluded or
  included"), or a date foreign to the passage where the task asks for a date;
- facts without their meaning: each number or date among the key facts must stand next to a word the passage
  uses next to it ("30 calendar days", "within 60 days"), and the answer must use at least a few of the
  passage's own words that the question does not already say; a bare list ("0 29 30 1995-01-01") is no answer.
  A task that asks for a date only takes the date alone;
- contradictory: near a key fact it says the other side of the passage's rule ("over 60 days are included"
  where the passage excludes them, "does not apply" where it applies, "after" where it says "before", "before
  1 January 2017" where it says "effective 1 January 2017"), or a word fact is negated ("freight is not
  excluded" for the fact "freight is excluded"); hedged, too, when it offers the other side of a key date
  ("… or maybe before 1 January 2017"), or takes back what it states ("Or maybe it is otherwise; not sure.",
  "I could be wrong") in words the passage does not use.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from dptool.answers.hedges import nested_claims, offers_alternatives
from dptool.answers.parse import Text
from dptool.answers.passage import (
    NUMBER_WORDS,
    STOPWORDS,
    Claim,
    Reading,
    date_side,
    negated,
    read,
    rule_word,
    sentence_of,
    signature,
)
from dptool.answers.verdict import CONTRADICTED, FACT, HEDGED, Wrong, fmt, fold

# precision of a knowledge answer: what it may add to the gold passage
KNOWLEDGE_MIN_WORDS = 150
KNOWLEDGE_WORDS_PER_PASSAGE_WORD = 3
MAX_CHARS_PER_WORD = 30  # a text of few but enormous "words" is as long as a pasted kb
FOREIGN_ALLOWED = 2  # numbers or dates foreign to the passage that any answer may hold ("version 2.0")
EFFECTIVE_DATE = "effective_date"  # answer_format.asks of a date task (dptool.generate.knowledge writes it)
# meaning: the words that must come with the facts
CONTEXT_WORDS = 4  # content words on each side of a fact in which the passage's own neighbours are looked for
PASSAGE_WORDS = 3  # the passage's words (not the question's) an answer must use, a third of them when fewer
_GENERIC_KEYS = frozenset(["value", "values", "answer", "answers", "result", "text", "response", "output", "fact",
                           "facts", "key", "keys", "data", "items", "item", "list"])

# what stands between a key fact and its alternative: "30 or 45", "30 days (maybe 60", "either 30 or 60",
# "0.4 × csat (or 0.7", "30 days, if not 60", "30,000 czk or else 25,000", "30 days? 60"
_FILLER = r"(?:[\s,(:~]+|\b(?:else|maybe|perhaps|possibly|probably|rather|even|was|is|it|be|could|might|may|also)\b)*"
_OR = re.compile(r"[^\d.\n]{0,32}?(?:\b(?:or|maybe|perhaps|possibly|probably|alternatively|otherwise|either|"
                 r"if not|some say|or so|unless(?:\s+it\s+is)?|vs|versus)\b|\b(?:could|might|may)\s+(?:also\s+|well\s+|"
                 r"even\s+)?be\b|\b(?:some|others?)\b[^\d.;\n]{0,16}?\b(?:say|says|said|state|states|suggest)\b|\?)"
                 + _FILLER)
# a range or a slash between them: "30–60 days", "30/60", "1995/1996", "30 days to 60 days"
_RANGE = re.compile(r"\s*(?:[a-z%]+\s*){0,2}?(?:[/~\u2010-\u2015\u2044\u2215-]|\b(?:to|through|thru|until|till|and)\b)"
                    r"\s*")
_APPROXIMATE_BEFORE = re.compile(r"(?:\b(?:about|around|approximately|approx|roughly|circa|ca|nearly|almost|probably|"
                                 r"likely|perhaps|maybe|possibly|presumably)"
                                 r"\.?|[~≈])(?:\s+(?:the|a|an|first|last|within|over|under|more|less|than))*\s*$")
_APPROXIMATE_AFTER = re.compile(r"[^\d.;\n]{0,20}?\b(?:or so|ish|or thereabouts|give or take|(?:or\s+)?(?:maybe|"
                                r"perhaps|possibly|probably)\s+(?:even\s+)?(?:more|less|fewer|longer|shorter|later|earlier|"
                                r"higher|lower))\b|\+(?=[\s,;)]|$)|\s*\(?(?:±|\+/-)|[^\d.;\n]{0,24}?(?:\b(?:perhaps|probably|likely|"
                                r"i think|i believe|if i recall|not sure|uncertain|unsure)\b)")
# the answer taking back what it states, anywhere in it: "Or maybe it is otherwise; not sure.", "I could be wrong"
_DISOWNED = re.compile(r"\bor\s+(?:(?:maybe|perhaps|possibly)\s+)?(?:(?:it\s+is|it's|it\s+was|it\s+may\s+be|"
                       r"the\s+rule\s+is)\s+)?(?:otherwise|the\s+opposite|the\s+reverse|the\s+other\s+way(?:\s+a?round)?|something\s+"
                       r"else)\b|\bnot\s+(?:entirely\s+|completely\s+|fully\s+|quite\s+|totally\s+)?(?:sure|certain)\b|"
                       r"\b(?:unsure|uncertain)\b|\b(?:might|may|could)\s+(?:well\s+)?be\s+(?:wrong|mistaken|"
                       r"incorrect)\b|\b(?:do\s+not|don't|dont)\s+know\b|\bno\s+idea\b|\bhard\s+to\s+(?:say|tell)\b|"
                       r"\b(?:take|treat)\s+(?:this|it)\s+with\s+(?:a\s+grain|caution)", re.IGNORECASE)
_POLAR_OR = re.compile(r"[^.;\n]{0,16}?(?:\bor\b|/|\b(?:maybe|perhaps|possibly|probably)\b)[^.;\n]{0,12}")


@dataclass
class _Facts:
    days: set[date]
    months: set[tuple[int, int]]
    numbers: list[float]
    words: set[str]


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _same_word(a: str, b: str) -> bool:
    """One word in two forms: "day" and "days", "count" and "counted", "delivery" and "delivered"."""
    short, long = sorted((a, b), key=len)
    if a == b or (len(short) >= 4 and long.startswith(short)):
        return True
    common = len(os.path.commonprefix((a, b)))
    return common >= max(5, math.ceil(0.75 * len(short)))


def _content(word: str) -> bool:
    return bool(word) and word.isalpha() and word not in NUMBER_WORDS and word not in STOPWORDS


def _index(reading: Reading) -> _Facts:
    days, months, numbers = set(), set(), []
    for c in reading.claims:
        for x in c.means:
            if isinstance(x, date):
                days.add(x)
                months.add((x.year, x.month))
                numbers += [float(x.year), float(x.day), float(x.month)]  # "2018" of a fact is in "1 May 2018"
            elif isinstance(x, tuple):
                months.add(x)
                numbers.append(float(x[0]))
            else:
                numbers += [x, x / 100] if c.percent else [x]  # "60%" holds the share 0.6
    words = {_stem(t.word) for t in reading.tokens if _content(t.word)}
    return _Facts(days, months, numbers, words)


def missing_fact(fact: str, answer_text: str) -> str | None:
    """The first part of a key fact the answer does not contain, or None when it holds the fact."""
    return _missing(read(fact), _index(read(answer_text)))


def _missing(fact: Reading, have: _Facts) -> str | None:
    need = _index(fact)
    stated = [x for c in fact.claims for x in c.means]
    for d in sorted(x for x in stated if isinstance(x, date)):
        if d not in have.days:
            return d.isoformat()
    for y, m in sorted(x for x in stated if isinstance(x, tuple)):
        if (y, m) not in have.months:
            return f"{y}-{m:02d}"
    for c in fact.claims:
        for n in (x for x in c.means if isinstance(x, float)):
            forms = (n, n / 100) if c.percent else (n,)  # a fact "80%" is found as 0.8 too
            if not any(math.isclose(m, h, rel_tol=1e-9, abs_tol=1e-9) for m in forms for h in have.numbers):
                return fmt(n)
    for w in sorted(need.words):
        if not any(_same_word(w, h) for h in have.words):
            return w
    return None


def flatten(x: Any) -> str:
    """A JSON answer as text: its fields' names (but generic ones such as "value") and values."""
    if isinstance(x, dict):
        return " ; ".join(f"{'' if k.lower() in _GENERIC_KEYS else k.replace('_', ' ') + ': '}{flatten(v)}"
                          for k, v in x.items())
    if isinstance(x, list):
        return " ; ".join(flatten(v) for v in x)
    return "" if x is None else str(x)


def _in(x: Any, source: _Facts) -> bool:
    if isinstance(x, date):
        return x in source.days
    if isinstance(x, tuple):
        return x in source.months
    # a share may be written as a fraction or in percent
    return any(math.isclose(x, a * f, rel_tol=1e-9, abs_tol=1e-9) for a in source.numbers for f in (1, 100, 0.01))


def _show_claim(claim: Claim) -> str:
    x = min(claim.means, key=str)
    return x.isoformat() if isinstance(x, date) else f"{x[0]}-{x[1]:02d}" if isinstance(x, tuple) else fmt(x)


def _pairs(reading: Reading) -> list[tuple[Claim, Claim, str]]:
    """Neighbouring claims of different meaning, with the text between them."""
    placed = reading.claims
    return [(a, b, reading.text[a.end:b.start]) for a, b in zip(placed, placed[1:], strict=False)
            if a.means != b.means and b.start - a.end <= 48]


def _offered(a: Claim, b: Claim, gap: str, text: str) -> str | None:
    """How two neighbouring claims are offered as alternatives: "or" (or maybe, possibly …), "range" (a dash, a
    slash, "to", "between … and"), or None."""
    if _OR.fullmatch(gap) or (re.fullmatch(r"[\s,(:~]*", gap) and text[b.end:b.end + 2].lstrip().startswith("?")):
        return "or"  # "60 or 90", "60 (90?)"
    if _RANGE.fullmatch(gap) and ("and" not in gap or text[max(0, a.start - 9):a.start].rstrip().endswith("between")):
        return "range"
    return None


def _precise(answer: Reading, passage: Reading, gold: dict, fmt_: dict, question: str) -> None:
    """Raise Wrong (hedged) when a knowledge answer says more than its gold passage supports."""
    facts = gold.get("facts") or []
    source = _index(read("\n".join([gold.get("passage") or "", question, *facts])))
    distinct = list({c.means: c for c in answer.claims}.values())
    supported = [c for c in distinct if any(_in(x, source) for x in c.means)]
    foreign = [c for c in distinct if c not in supported]
    if fmt_.get("asks") == EFFECTIVE_DATE:
        dates = [c for c in foreign if not isinstance(next(iter(c.means)), float)]
        if dates:
            raise Wrong(f"hedged answer: the date {_show_claim(dates[0])} is not in the governing passage", HEDGED)
    if len(foreign) > max(FOREIGN_ALLOWED, len(supported)):
        raise Wrong(f"hedged answer: {len(foreign)} numbers or dates not in the governing passage "
                    f"({', '.join(_show_claim(c) for c in foreign[:3])}, …), {len(supported)} from it", HEDGED)
    key = _key_facts(facts)
    stated = {frozenset((a.means, b.means)) for a, b, gap in _pairs(passage) if _offered(a, b, gap, passage.text)}

    def kind(c: Claim) -> str:
        if any(_in(x, key) for x in c.means):
            return "key"
        return "supported" if any(_in(x, source) for x in c.means) else "foreign"

    for a, b, gap in _pairs(answer):
        offered = _offered(a, b, gap, answer.text)
        if offered is None or frozenset((a.means, b.means)) in stated:
            continue
        sides = {kind(a), kind(b)}
        if (offered == "or" and "key" in sides) or ("foreign" in sides and sides != {"foreign"}):
            raise Wrong(f"hedged answer: {answer.text[a.start:b.end]!r} offers an alternative to a key fact", HEDGED)
    for c in answer.claims:
        if kind(c) != "key":
            continue
        before, after = answer.text[max(0, c.start - 32):c.start], answer.text[c.end:c.end + 40]
        if (_APPROXIMATE_BEFORE.search(before) or _APPROXIMATE_AFTER.match(after)) and \
                not _approximate_in(passage, c):
            raise Wrong(f"hedged answer: {' '.join((before[-12:] + answer.text[c.start:c.end]).split())!r} "
                        "makes a key fact approximate", HEDGED)
    _no_two_sides(answer, passage)
    _not_disowned(answer, passage)


def _not_disowned(answer: Reading, passage: Reading) -> None:
    """Raise Wrong (hedged) when the answer takes back what it states ("Or maybe it is otherwise; not sure."): every
    key fact and then a doubt of them all is two answers, one of them right whatever the gold. Words of doubt the
    passage itself uses ("where the district is uncertain") are the rule's own."""
    found = _DISOWNED.search(answer.text)
    if found and not any(fold(found.group(0)) == fold(m.group(0)) for m in _DISOWNED.finditer(passage.text)):
        raise Wrong(f"hedged answer: {' '.join(found.group(0).split())!r} takes back what the answer states", HEDGED)


def _key_facts(facts: list[str]) -> _Facts:
    stated = [x for c in read(" ; ".join(facts)).claims for x in c.means]  # not a date's parts, unlike _index
    return _Facts({x for x in stated if isinstance(x, date)}, {x for x in stated if isinstance(x, tuple)},
                  [x for x in stated if isinstance(x, float)], set())


def _approximate_in(passage: Reading, claim: Claim) -> bool:
    return any(c.means == claim.means and _APPROXIMATE_BEFORE.search(passage.text[max(0, c.start - 32):c.start])
               for c in passage.claims)


def _two_sides(reading: Reading) -> list[tuple[int, int, str]]:
    """Rule words of one family and opposite sides offered as alternatives: "excluded or included",
    "included/excluded", "counted or not"."""
    out = []
    polar = [t for t in reading.tokens if t.polar]
    for t, u in zip(polar, polar[1:], strict=False):
        if t.polar[0] == u.polar[0] and t.polar[1] != u.polar[1] and t.sentence == u.sentence and \
                u.start - t.end <= 30 and _POLAR_OR.fullmatch(reading.text[t.end:u.start]):
            out.append((t.start, u.end, t.polar[0]))
    for t in polar:
        if re.match(r"\s*,?\s*or not\b", reading.text[t.end:t.end + 12]):
            out.append((t.start, t.end + 12, t.polar[0]))
    return out


def _no_two_sides(answer: Reading, passage: Reading) -> None:
    allowed = {family for _, _, family in _two_sides(passage)}
    for start, end, family in _two_sides(answer):
        if family not in allowed:
            raise Wrong(f"hedged answer: {' '.join(answer.text[start:end].split())!r} offers both sides of the rule",
                        HEDGED)


# ---- meaning: the facts in words ---------------------------------------------------------------------------


def _mentions(reading: Reading, x: Any) -> list[int]:
    """The tokens of a text that state x: a number (a year also inside a date, a share also in percent), a day or
    a month."""
    out = []
    for i, t in enumerate(reading.tokens):
        if t.claim is not None and any(_same_claim(x, m, t.claim.percent) for m in t.claim.means):
            out.append(i)
    return out


def _same_claim(x: Any, m: Any, percent: bool = False) -> bool:
    if isinstance(x, float):
        if isinstance(m, float):
            return any(math.isclose(x, n, rel_tol=1e-9, abs_tol=1e-9) for n in ((m, m / 100) if percent else (m,)))
        year = m.year if isinstance(m, date) else m[0]
        return x == year
    if isinstance(x, date):
        return m == x
    return m == x or (isinstance(m, date) and (m.year, m.month) == x)


def _neighbours(reading: Reading, i: int) -> list[str]:
    """The content words next to the token at tokens[i], up to CONTEXT_WORDS on each side, in its sentence."""
    tokens, sentence, out = reading.tokens, reading.tokens[i].sentence, []
    for step in (-1, 1):
        j, found = i + step, 0
        while 0 <= j < len(tokens) and tokens[j].sentence == sentence and found < CONTEXT_WORDS:
            if _content(tokens[j].word):
                out.append(_stem(tokens[j].word))
                found += 1
            j += step
    return out


def _akin(a: str, b: str) -> bool:
    """Two words that say the same in a rule: one word ("days", "day"), one rule family ("dropped", "excluded")
    or one comparator ("longer", "more")."""
    return _same_word(a, b) or (rule_word(a) is not None and rule_word(a) == rule_word(b))


def _meaning(answer: Reading, passage: Reading, facts: list[str], question: Reading) -> None:
    """Raise Wrong unless each number and date of the key facts stands next to a word the passage uses next to
    it, and the answer uses enough of the passage's own words (or words akin to them: "dropped" for "excluded")
    beyond those of the question."""
    words_of = {fact: {_stem(t.word) for t in read(fact).tokens if _content(t.word)} for fact in facts}
    for fact in facts:
        # another fact's words say nothing of this one: "50 52 40 not reported at all" holds no unit for 50
        others = set().union(*(w for f, w in words_of.items() if f != fact)) - words_of[fact]
        for x in {x for c in read(fact).claims for x in c.means}:
            at = _mentions(passage, x)
            if not at:
                continue
            near = {w for i in at for w in _neighbours(passage, i) if not any(_same_word(w, o) for o in others)}
            given = {w for i in _mentions(answer, x) for w in _neighbours(answer, i)
                     if not any(_same_word(w, o) for o in others)}
            if not any(_akin(w, v) for w in given for v in near):
                example = sentence_of(passage, at[0])
                raise Wrong(f"missing key fact {fact!r}: stated without what it measures (the passage: "
                            f"{example!r})", FACT)
    known = {_stem(t.word) for t in question.tokens if _content(t.word)}
    own = {_stem(t.word) for t in passage.tokens if _content(t.word)}
    own = {w for w in own if not any(_same_word(w, q) for q in known)}
    used = {_stem(t.word) for t in answer.tokens if _content(t.word)}
    said = sorted(w for w in own if any(_akin(w, u) for u in used))
    needed = min(PASSAGE_WORDS, math.ceil(len(own) / 3))
    if len(said) < needed:
        raise Wrong(f"missing key fact: the answer states the facts without the rule ({len(said)} of the passage's "
                    f"words beyond the question, at least {needed})", FACT)


# ---- polarity: the rule not inverted ------------------------------------------------------------------------


def _conflict(a: dict[str, set[int]], p: dict[str, set[int]]) -> str | None:
    """The family in which two signatures say opposite things, None when they agree. Two opposites make one
    rule again: "60 days or less stay in" says what "more than 60 days are excluded" says."""
    opposite = [family for family, sides in a.items() if family in p and not sides & p[family]]
    if "comparator" in opposite and {-x for x in a["comparator"]} != p["comparator"]:
        return "comparator"  # "exactly 60" against "less than 60": another range, no double negation
    return opposite[0] if len(opposite) % 2 else None


def _judges(mine: dict[str, set[int]], said: list[tuple[int, dict[str, set[int]]]]) -> list:
    """The passage's statements of a fact that can judge what the answer says of it: those that share a rule-word
    family or the comparator with it, and of them only those with a comparator when the answer gives one
    ("18 or over")."""
    if "comparator" in mine and any("comparator" in s for _, s in said):
        said = [(j, s) for j, s in said if "comparator" in s]
    return [(j, s) for j, s in said if set(s) & set(mine)]


def _not_inverted(answer: Reading, passage: Reading, facts: list[str]) -> None:
    """Raise Wrong (contradictory) when, near a key fact, the answer says the other side of what the passage says
    near it, in every place the passage states it."""
    for fact in facts:
        for x in {x for c in read(fact).claims for x in c.means}:
            said = [(i, signature(passage, i)) for i in _mentions(passage, x)]
            for i in _mentions(answer, x):
                mine = signature(answer, i)
                judged = _judges(mine, said)
                if judged and all(_conflict(mine, s) for _, s in judged):
                    j, s = judged[0]
                    raise Wrong(f"contradictory answer: {sentence_of(answer, i)!r} inverts the passage's "
                                f"{_conflict(mine, s)} rule for {fact!r} ({sentence_of(passage, j)!r})", CONTRADICTED)
        _not_negated(fact, answer)


# an alternative offered before a date's side: "or maybe before 1 January 2017" ("on or after" is one side)
_OTHER_SIDE = re.compile(r"(?:(?<!on )(?<!at )\bor\b|\b(?:maybe|perhaps|"
                         r"possibly|probably|alternatively|either|otherwise|if not|could be|might be)\b)"
                         r"[^.;\n\d]{0,24}$")


def _one_side_of_dates(answer: Reading, passage: Reading, facts: list[str]) -> None:
    """Raise Wrong when the answer puts a key date's rule on the other side of it: "before 1 January 2017" where
    the passage says "effective 1 January 2017" (contradictory, when no mention says the passage's side), or offers
    that side as an alternative, "… or maybe before 1 January 2017" (hedged). Only a date the passage starts or
    ends its rule at ("effective", "from", "until") has a side; one it speaks of from both sides ("from …; until
    …") is left to the other checks."""
    for fact in facts:
        for x in {x for c in read(fact).claims for x in c.means if isinstance(x, date)}:
            # the passage's side of a date is what starts or ends its rule: "periods before 1 January 1997 were
            # restated" says no side of a rule that applies to every period
            sides = {date_side(passage, j, comparators=False) for j in _mentions(passage, x)} - {None}
            if len(sides) != 1:
                continue
            side = sides.pop()
            said = [(i, s) for i in _mentions(answer, x) if (s := date_side(answer, i)) is not None]
            if said and all(s != side for _, s in said):
                raise Wrong(f"contradictory answer: {sentence_of(answer, said[0][0])!r} puts the rule on the other "
                            f"side of {x.isoformat()} than the passage", CONTRADICTED)
            for i, s in said:
                start = answer.tokens[i].start
                if s != side and _OTHER_SIDE.search(answer.text[max(0, start - 48):start]):
                    raise Wrong(f"hedged answer: {sentence_of(answer, i)!r} offers the other side of "
                                f"{x.isoformat()} as an alternative", HEDGED)


def _not_negated(fact: str, answer: Reading) -> None:
    """A word fact is said as it is: "freight is excluded" is not "freight is not excluded", "never count
    customer records" is not "count customer records"."""
    said = read(fact)
    for i, t in enumerate(said.tokens):
        want = negated(said, i)
        if not _content(t.word) or not (want or t.polar):
            continue
        word = _stem(t.word)
        found = {negated(answer, k) for k, u in enumerate(answer.tokens)
                 if _content(u.word) and _same_word(word, _stem(u.word))}
        if found and want not in found:
            raise Wrong(f"contradictory answer: {'says' if want else 'negates'} {t.word!r} where the key fact is "
                        f"{fact!r}", CONTRADICTED)


# ---- the comparator --------------------------------------------------------------------------------------------


def knowledge(answer: Any, gold: dict, fmt_: dict, tol: dict, question: str = "") -> None:
    """Raise Wrong unless the answer states every key fact of the gold passage, precisely and in its meaning."""
    facts = gold.get("facts") or []
    if not facts:
        raise Wrong("the task records no key facts to check")
    if isinstance(answer, dict | list):
        for path, x in ([("answer", answer)] if isinstance(answer, list) else answer.items()):
            if isinstance(path, str) and offers_alternatives(path, x):
                raise Wrong(f"hedged answer: {path!r} offers alternatives", HEDGED)
            if isinstance(x, dict | list):
                nested_claims(x, str(path), frozenset(), verdicts=False)
    text = answer.text if isinstance(answer, Text) else flatten(answer)
    passage_text = gold.get("passage") or ""
    words = len(text.split())
    limit = max(KNOWLEDGE_MIN_WORDS, KNOWLEDGE_WORDS_PER_PASSAGE_WORD * len(passage_text.split()))
    if words > limit or len(text) > limit * MAX_CHARS_PER_WORD:
        raise Wrong(f"hedged answer: {words:,} words, at most {limit:,} for this passage", HEDGED)
    said, passage = read(text, clauses=True), read(passage_text)
    have = _index(said)
    for fact in facts:
        part = _missing(read(fact), have)
        if part is not None:
            raise Wrong(f"missing key fact {fact!r} ({part!r} not found)", FACT)
    _precise(said, passage, gold, fmt_, question)
    if fmt_.get("asks") != EFFECTIVE_DATE:  # "What is the effective date?" is answered by the date
        _meaning(said, passage, facts, read(question))
    _not_inverted(said, passage, facts)
    _one_side_of_dates(said, passage, facts)
