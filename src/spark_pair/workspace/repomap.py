"""The repository map: paths and their top-level definitions, within a small token budget.

It tells the model where things are (and where a new file belongs) without sending the files.
Files are ranked by how related they are to the instruction and to the files being sent: a path
holding the instruction's words, a definition it names, the same folder as a file being sent.
What does not fit is summed up per folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from ..protocol.metrics import estimate_tokens
from .layout import path_words

if TYPE_CHECKING:
    from .index import RepoIndex

HEAD = "Repository map (other files, with their top-level definitions; not shown in full):\n"
MAX_NAMES = 12  # definitions listed per file, at most
_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9]{2,}")


def repo_map(index: RepoIndex, instruction: str, shown: Collection[str],
             budget_tokens: int) -> str:
    """The map ('' when the budget is too small or the repository has no other file)."""
    paths = [p for p in index.files if p not in shown]
    if not paths or budget_tokens < 40:
        return ""
    ranked = _rank(index, instruction, shown, paths)
    # the definitions of the best-ranked files only (a lookup per file would be slow)
    defs = index.definitions_of(ranked[:400])
    lines: list[str] = []
    used = estimate_tokens(HEAD) + 12  # the folder summary's line
    taken: set[str] = set()
    for rel in ranked:
        line = _line(rel, defs.get(rel))
        cost = estimate_tokens(line)
        if used + cost > budget_tokens:
            if cost <= 8:
                break
            continue  # a long line: a shorter one further down may still fit
        lines.append(line)
        taken.add(rel)
        used += cost
    if not lines:
        return ""
    rest = [p for p in paths if p not in taken]
    out = HEAD + "".join(sorted(lines))
    if rest:
        out += _summary(rest, budget_tokens - used) + "\n"
    return out


def _line(rel: str, defs: Sequence | None) -> str:
    if not defs:
        return rel + "\n"
    names = []
    for d in defs[:MAX_NAMES]:
        names.append(f"{d.kind} {d.name}" if d.kind in ("class", "struct", "interface",
                                                        "trait", "enum") else d.name)
    more = f", +{len(defs) - MAX_NAMES}" if len(defs) > MAX_NAMES else ""
    return f"{rel}: {', '.join(names)}{more}\n"


def _rank(index: RepoIndex, instruction: str, shown: Collection[str],
          paths: list[str]) -> list[str]:
    words = {w.lower() for w in _WORDS.findall(instruction)}
    named = {rel for rel, _ in index.defining(words, any_case=True)}
    near = {os.path.dirname(p) for p in shown}
    parents = {os.path.dirname(d) for d in near}
    pw = path_words(index.files)
    scores: dict[str, float] = {}
    for rel in paths:
        folder, depth = pw.folders.get(rel) or (os.path.dirname(rel), rel.count("/"))
        score = 1.0 / (1 + depth)  # the top of the tree tells its shape
        if rel in named:
            score += 4.0
        if folder in near:
            score += 3.0
        elif folder in parents or os.path.dirname(folder) in near:
            score += 1.0
        scores[rel] = score
    for word in words:
        for rel in pw.by_word.get(word, ()):
            if rel in scores:
                scores[rel] += 3.0
    return sorted(paths, key=lambda p: (-scores[p], p))


def _summary(rest: list[str], budget: int) -> str:
    """'other files: N in tests/, M in docs/, ...' within what is left of the budget."""
    counts: dict[str, int] = {}
    for rel in rest:
        top = rel.split("/", 1)[0] + "/" if "/" in rel else "./"
        counts[top] = counts.get(top, 0) + 1
    parts = [f"{n} in {folder}" for folder, n in sorted(counts.items(), key=lambda kv: -kv[1])]
    text = f"... and {len(rest)} more files"
    while parts and estimate_tokens(text + ": " + ", ".join(parts)) > max(budget, 12):
        parts.pop()
    return text + (": " + ", ".join(parts) if parts else "")
