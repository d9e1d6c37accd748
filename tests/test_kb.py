"""search_kb: BM25 over the paragraphs of a hand-made kb/ folder."""

from __future__ import annotations

import pytest

from dptool.errors import DptoolError
from dptool.evaluate.kb import KnowledgeBase, paragraphs

OUTLIER = """# Delivery Time Outlier Exclusion

**Revision history**

| Version | Date |
|---|---|
| 1.0 | 1 January 2017 |

## 4. Rule

Any delivered order whose delivery took more than 60 calendar days from purchase to receipt is a data anomaly and
is excluded from the Average Delivery Time. The order leaves both the sum of durations and the count of orders.
"""
CSAT = """# CSAT Neutral Review Exclusion

## 4. Rule

Neutral 3-star reviews are removed from the denominator of Customer Satisfaction. They count neither as
satisfied nor as unsatisfied; they simply do not take part in the calculation of the share.
"""
METRICS = """# Metric catalog

## Average Delivery Time

- Formula: AVG(days from purchase to delivery)
- Tables: orders

## Customer Satisfaction (CSAT)

- Formula: COUNT(reviews with 4 or 5 stars) / COUNT(reviews)
"""


@pytest.fixture
def kb_folder(tmp_path):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "outlier_exclusion.md").write_text(OUTLIER, encoding="utf-8")
    (tmp_path / "rules" / "csat_neutral_exclusion.md").write_text(CSAT, encoding="utf-8")
    (tmp_path / "metrics.md").write_text(METRICS, encoding="utf-8")
    return tmp_path


def test_the_rule_paragraph_ranks_first_for_its_topic(kb_folder):
    kb = KnowledgeBase(kb_folder)
    best, _ = kb.search("outliers in average delivery time, days excluded")[0]
    assert (best.source, best.section) == ("rules/outlier_exclusion.md", "4. Rule")
    assert kb.search("neutral reviews CSAT")[0][0].source == "rules/csat_neutral_exclusion.md"


def test_short_paragraphs_are_joined_with_the_next_one_of_their_section():
    texts = [p.text for p in paragraphs("rules/outlier_exclusion.md", OUTLIER)]
    assert texts[0].startswith("**Revision history**\n\n| Version | Date |")
    assert len(texts) == 2


def test_the_tool_output_names_source_title_and_section(kb_folder):
    out = KnowledgeBase(kb_folder).run("neutral 3-star", k=1)
    assert out.startswith("[rules/csat_neutral_exclusion.md — CSAT Neutral Review Exclusion › 4. Rule]\n"
                          "Neutral 3-star reviews are removed")


def test_no_match_and_an_empty_query_are_one_line_for_the_agent(kb_folder):
    kb = KnowledgeBase(kb_folder)
    assert kb.run("zebra") == "no passage matches these words; try other words (metric names, rule topics)"
    assert kb.run("  ") == "error: search_kb needs a non-empty query"


def test_only_restricts_the_documents_searched(kb_folder):
    kb = KnowledgeBase(kb_folder, only=("metrics.md",))
    assert {p.source for p in kb.passages} == {"metrics.md"}
    assert all(p.source == "metrics.md" for p, _ in kb.search("neutral reviews excluded CSAT"))


def test_equal_scores_are_ordered_by_source_then_position(tmp_path):
    text = "# Doc\n\nThe grace period is one calendar day after the estimated delivery date of the order.\n"
    for name in ("b.md", "a.md", "c.md"):
        (tmp_path / name).write_text(text, encoding="utf-8")
    hits = KnowledgeBase(tmp_path).search("grace period")
    assert [p.source for p, _ in hits] == ["a.md", "b.md", "c.md"]
    assert hits[0][1] == hits[1][1] == hits[2][1]


def test_a_missing_folder_is_one_error_line(tmp_path):
    with pytest.raises(DptoolError, match="knowledge base folder not found"):
        KnowledgeBase(tmp_path / "nope")


def test_a_huge_query_is_cut_to_its_first_words_and_says_so(kb_folder):
    """Issue 23: a 100,000-word query took 18.8 s in the parent process (BM25 scores every term)."""
    import time

    from dptool.evaluate.kb import MAX_QUERY_WORDS

    kb = KnowledgeBase(kb_folder)
    query = "delivery outlier " + " ".join(f"word{i}" for i in range(100_000))
    start = time.perf_counter()
    out = kb.run(query)
    assert time.perf_counter() - start < 0.5
    first = out.splitlines()[0]
    assert first == (f"(the query was cut to its first {MAX_QUERY_WORDS} search words, at most 2,000 characters: "
                     "search with a few words)")
    assert "[rules/outlier_exclusion.md" in out  # the first words still find their passage
    assert not kb.run("delivery outlier").startswith("(the query was cut")


def test_a_kb_of_one_folder_per_domain_gives_each_domain_its_own(tmp_path):
    """Issue 26: kb/<domain>/ per domain; a kb/ with metrics.md at its top (a bundle of before) serves every domain."""
    from dptool.evaluate.kb import domain_folder, domain_folders

    for domain, title in (("banking", "Small Sample Suppression"), ("ecommerce", "Small-Sample Suppression")):
        (tmp_path / "kb" / domain / "rules").mkdir(parents=True)
        (tmp_path / "kb" / domain / "rules" / "suppression.md").write_text(f"# {title}\n\nSmall groups suppressed.\n")
        (tmp_path / "kb" / domain / "metrics.md").write_text("# Metric catalog\n")
    kb = tmp_path / "kb"
    assert domain_folders(kb) == {"banking": kb / "banking", "ecommerce": kb / "ecommerce"}
    assert domain_folder(kb, "banking") == kb / "banking"
    hits = KnowledgeBase(domain_folder(kb, "banking")).search("small sample suppression")
    assert [p.title for p, _ in hits] == ["Small Sample Suppression"]
    with pytest.raises(DptoolError, match="no knowledge base for the domain 'shop'"):
        domain_folder(kb, "shop")
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "metrics.md").write_text("# Metric catalog\n")
    assert domain_folders(tmp_path / "flat") == {None: tmp_path / "flat"}
    assert domain_folder(tmp_path / "flat", "shop") == tmp_path / "flat"
