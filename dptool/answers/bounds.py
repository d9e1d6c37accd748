"""A number that is bounded, negated or approximate names no value: "> 52", "at least 52", "52 or more", "52+",
"not 52", "≠ 52", "about 52", "~52", "52-ish". Such an answer is a hedge, never the number it mentions.

Read right around the number only (its unit or a currency between is fine: "more than CZK 52", "52 sellers or
more"); words further off speak of something else ("52 sellers with at least one order" is 52).
"""

from __future__ import annotations

import re

_WORDS = "|".join(sorted([
    # bounds
    "more", "less", "fewer", "greater", "higher", "lower", "larger", "smaller", "bigger", "over", "under", "above",
    "below", "beyond", "exceeds", "exceeding", "exceeded", "exceed", "up to", "upto", "at least", "at most",
    "at the least", "at the most", "no more", "no less", "no fewer", "not more", "not less", "min", "max", "minimum",
    "maximum", "upwards of", "in excess of", "north of", "south of", "short of", "within", "below or equal",
    # negations
    "not", "never", "isn't", "isnt", "wasn't", "wasnt", "aren't", "weren't", "neither", "nor", "other than",
    "anything but", "except", "unlike",
    # approximations
    "about", "around", "approximately", "approx", "roughly", "circa", "ca", "nearly", "almost", "close to", "some",
    "estimated", "est", "near", "approaching", "on the order", "in the region", "something like", "ballpark",
], key=len, reverse=True))
_SYMBOLS = r"<=|>=|=<|!=|<>|=/=|[<≤≦⩽≥≧⩾≠≈≃≅∼~≲≳≪≫]|(?<![-=])>"
# what may stand between the bounding word and the number: "more than", "not equal to", "close to the"
_FILLER = (r"(?:\s+(?:than|to|of|equal|equals|quite|exactly|the|a|an|value|is|was|be|or|and|"
           r"czk|kč|kc|eur|usd|gbp|brl|chf|pln|huf|jpy|cny|inr|r\$|us\$))*")
_BEFORE = re.compile(rf"(?:(?<![a-z'])(?:{_WORDS})\.?{_FILLER}|(?:{_SYMBOLS}))\s*[:=]?\s*$")
_AFTER = re.compile(
    r"^(?:\s*[a-zà-ž%$€£¥₹.(),]+){0,2}?\s*(?:"
    r"(?:,\s*)?\b(?:or|and)\s+(?:more|less|fewer|above|below|over|under|higher|lower|greater|larger|smaller|up|"
    r"down|so|thereabouts|beyond|after|before|later|earlier)\b|"
    r"\bat\s+(?:the\s+)?(?:most|least)\b|"
    r"\b(?:tops|plus|max|maximum|minimum|give\s+or\s+take|approx|approximately|roughly|estimated|est|ish|"
    r"(?:lower|upper)\s+bound|bound|floor|ceiling|cap|if\s+not\s+(?:more|less|fewer|higher|lower)|"
    r"(?:maybe|perhaps|possibly)\s+(?:more|less|fewer|higher|lower))\b|"
    r"\+(?!\s*\d)|\?|[-\u2010-\u2015]ish\b)")
_LOOK = 40  # characters read on each side of the number


def bounded(text: str, start: int, end: int) -> str | None:
    """The words that bound, negate or blur the number at text[start:end] ("at least 52", "not 52", "~52"), or
    None when it stands as a value."""
    # lower case, not folded: folding takes "≠" apart into "=" and a combining stroke
    before = " ".join(text[max(0, start - _LOOK):start].lower().split())
    after = " ".join(text[end:end + _LOOK].lower().split())
    m = _BEFORE.search(before)
    if m:
        return " ".join((m.group(0) + " " + text[start:end]).split())
    m = _AFTER.match(after)
    if m:
        return " ".join((text[start:end] + m.group(0)).split())
    return None
