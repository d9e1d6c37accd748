"""The knowledge base of a bundle (kb/**/*.md) as paragraphs, searched with BM25 (rank-bm25).

A bundle's kb/ holds one folder per domain (kb/<domain>/metrics.md, kb/<domain>/rules/<id>.md): a task is answered
from its own domain's documents, so two domains' policies of one name never meet in a search. A kb/ with
metrics.md or rules/ at its top (a bundle written before domains had folders) is one knowledge base for every domain.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from dptool.errors import DptoolError

DEFAULT_K = 5
MIN_WORDS = 40
# a query is cut to its first words: BM25's cost grows with every term, and no question needs more
MAX_QUERY_WORDS = 64
MAX_QUERY_CHARS = 2_000  # cut before the words are counted: a megabyte of text is not tokenized
_STOPWORDS = frozenset(["a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "from", "with", "and", "or",
                        "is", "are", "was", "were", "be", "as", "that", "this", "it", "its", "what", "which",
                        "how", "our", "we", "do", "does", "did"])


@dataclass(frozen=True)
class Passage:
    """One paragraph of a kb document, with the document title and the section it sits in."""

    source: str  # path under kb/, e.g. rules/outlier_exclusion.md
    title: str
    section: str
    text: str

    def render(self) -> str:
        where = " › ".join(p for p in (self.title, self.section) if p)
        return f"[{self.source} — {where}]\n{self.text}"


def tokens(text: str) -> list[str]:
    """Lower-case words and numbers without accents or stopwords: the terms BM25 counts."""
    text = unicodedata.normalize("NFKD", text.casefold())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return [t for t in re.findall(r"[a-z0-9]+", text) if t not in _STOPWORDS]


def paragraphs(source: str, markdown: str) -> list[Passage]:
    """The paragraphs of a markdown document, headings labelling what follows.

    Paragraphs shorter than MIN_WORDS are joined with the next one of the same section: BM25 favours
    short texts, and a lone "**Revision history**" line would otherwise outrank the rule itself.
    """
    title, section, out, pending = "", "", [], []

    def flush() -> None:
        if pending:
            out.append(Passage(source, title, section, "\n\n".join(pending)))
            pending.clear()

    for block in re.split(r"\n\s*\n", markdown.strip()):
        body = []
        for line in block.strip().splitlines():
            heading = re.match(r"^(#{1,6})\s+(.*)$", line)
            if heading and not body:
                flush()
                if len(heading.group(1)) == 1 and not title:
                    title = heading.group(2).strip()
                else:
                    section = heading.group(2).strip()
            else:
                body.append(line)
        text = "\n".join(body).strip()
        if text:
            pending.append(text)
            if sum(len(t.split()) for t in pending) >= MIN_WORDS:
                flush()
    flush()
    return out


def domain_folders(kb: Path) -> dict[str | None, Path]:
    """The knowledge base of each domain: {domain: kb/<domain>}, or {None: kb} for a kb/ of one shared folder."""
    if (kb / "metrics.md").is_file() or (kb / "rules").is_dir():
        return {None: kb}
    return {p.name: p for p in sorted(kb.iterdir()) if p.is_dir()} if kb.is_dir() else {}


def domain_folder(kb: Path, domain: str | None) -> Path:
    """The folder a task of `domain` reads: kb/<domain>, or kb/ itself when it is shared by every domain."""
    folders = domain_folders(kb)
    if None in folders:
        return kb
    if domain not in folders:
        raise DptoolError(f"{kb}: no knowledge base for the domain {domain!r} (expected {kb / str(domain)}/)")
    return folders[domain]


class KnowledgeBase:
    """BM25 over every paragraph of the kb documents, ties broken by source and position."""

    def __init__(self, folder: str | Path, only: tuple[str, ...] | None = None):
        """`only`: the documents to index, as paths under the folder (all *.md files when None)."""
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise DptoolError(f"{self.folder}: knowledge base folder not found")
        files = sorted(p.relative_to(self.folder).as_posix() for p in self.folder.rglob("*.md"))
        if only is not None:
            files = [f for f in files if f in only]
        self.passages = [p for f in files
                         for p in paragraphs(f, (self.folder / f).read_text(encoding="utf-8"))]
        if not self.passages:
            raise DptoolError(f"{self.folder}: no paragraphs to search")
        corpus = [tokens(f"{p.title} {p.section} {p.text}") for p in self.passages]
        self._terms = [set(c) for c in corpus]
        from rank_bm25 import BM25Okapi  # with numpy: imported when a kb is read, not when a server starts

        self._bm25 = BM25Okapi(corpus)

    def search(self, query: str, k: int = DEFAULT_K) -> list[tuple[Passage, float]]:
        """The k best passages with their BM25 scores; only passages sharing a term with the query (of which the
        first MAX_QUERY_WORDS terms count)."""
        terms = tokens(query[:MAX_QUERY_CHARS])[:MAX_QUERY_WORDS]
        if not terms:
            return []
        scores = self._bm25.get_scores(terms)
        wanted = set(terms)
        hits = [(float(s), i) for i, s in enumerate(scores) if wanted & self._terms[i]]
        hits.sort(key=lambda h: (-h[0], h[1]))
        return [(self.passages[i], s) for s, i in hits[:k]]

    def run(self, query: str, k: int = DEFAULT_K) -> str:
        """The tool output an agent sees: the best passages, or one line starting with "error:"; a query cut to
        its first words says so first."""
        if not isinstance(query, str) or not query.strip():
            return "error: search_kb needs a non-empty query"
        cut = len(query) > MAX_QUERY_CHARS or len(tokens(query[:MAX_QUERY_CHARS])) > MAX_QUERY_WORDS
        note = (f"(the query was cut to its first {MAX_QUERY_WORDS} search words, at most {MAX_QUERY_CHARS:,} "
                "characters: search with a few words)\n\n") if cut else ""
        hits = self.search(query, k)
        if not hits:
            return note + "no passage matches these words; try other words (metric names, rule topics)"
        return note + "\n\n".join(p.render() for p, _ in hits)
