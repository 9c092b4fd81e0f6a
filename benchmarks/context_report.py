"""The tables bench_context.py prints: recall and precision per repository and set, then region
recall, file recall and request tokens for naming and concept instructions, the stable prefix,
and recall against tokens over budgets."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench_context import Result


def mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def row(label: str, results: list[Result]) -> str:
    if not results:
        return f"{label:<30} {'-':>5}"
    named = [r for r in results if r.names]
    precisions = [p for r in results if (p := r.precision) is not None]
    code = [c for r in results if (c := r.code_recall) is not None]
    return (f"{label:<30} {len(results):>5} {mean([r.recall for r in results]):>7.2f} "
            f"{mean(code):>6.2f} {mean([len(r.shown) / len(r.answer) for r in results]):>6.2f} "
            f"{mean([float(r.recall == 1.0) for r in results]):>6.2f} {mean(precisions):>6.2f} "
            f"{len(named) / len(results):>6.2f} {len(named):>5} "
            f"{mean([r.recall for r in named]):>7.2f} "
            f"{mean([float(r.recall == 1.0) for r in named]):>6.2f} "
            f"{mean([len(r.chosen) for r in results]):>6.1f}")


HEADER = (f"{'':<30} {'tasks':>5} {'recall':>7} {'code':>6} {'shown':>6} {'full':>6} "
          f"{'prec':>6} {'naming':>6} {'n':>5} {'recall':>7} {'full':>6} {'files':>6}\n"
          f"{'':<30} {'':>5} {'':>7} {'':>6} {'':>6} {'':>6} {'':>6} {'share':>6} "
          f"{'-- naming subset --':>20} {'':>6}")
LEGEND = """\
recall: mean per commit of the share of changed files (existing at the parent) whose changed
lines were in the context; code: the same over source files only; shown: the share in the
context at all (whole or regions, the lines or not); full: share of commits with recall 1;
prec: share of the chosen files the commit changed (commits with a chosen file); naming: share
of commits whose message names a file or an identifier the repository defines; files: chosen
files per commit."""


def report(results: list[Result], repos: list[dict], title: str) -> None:
    print(f"\n{title}")
    print(HEADER)
    for repo in repos:
        mine = [r for r in results if r.repo == repo["name"]]
        if mine:
            print(row(f"{repo['name']} ({repo['lang']})", mine))
    for part in ("tuning", "held-out"):
        names = {r["name"] for r in repos if r["set"] == part}
        mine = [r for r in results if r.repo in names]
        if mine:
            print(row(f"[{part}]", mine))
    print(row("[all]", results))


def figures(label: str, results: list[Result]) -> str:
    if not results:
        return f"{label:<34} {0:>5}"
    tokens = [r.tokens for r in results]
    return (f"{label:<34} {len(results):>5} {mean([r.region_recall for r in results]):>7.2f} "
            f"{mean([r.file_recall for r in results]):>6.2f} "
            f"{statistics.median(tokens):>8.0f} {max(tokens):>7}")


def regions_report(results: list[Result], repos: list[dict], every: list[dict]) -> None:
    """Region recall, file recall and request tokens for naming and concept instructions, per
    set (and the largest repository's naming ones), then recall against tokens over budgets."""
    largest = max(every, key=lambda r: r.get("files", 0))["name"]
    print("\nRegion recall and request tokens at the default budget")
    print(f"{'':<34} {'tasks':>5} {'region':>7} {'file':>6} {'median':>8} {'max':>7}\n"
          f"{'':<34} {'':>5} {'recall':>7} {'recall':>6} {'tokens':>8} {'tokens':>7}")
    groups: list[tuple[str, list[Result]]] = []
    for part in ("tuning", "held-out"):
        names = {r["name"] for r in repos if r["set"] == part}
        mine = [r for r in results if r.repo in names]
        if not mine:
            continue
        groups.append((f"[{part}] naming", [r for r in mine if r.names]))
        groups.append((f"[{part}] concept", [r for r in mine if not r.names]))
        big = [r for r in mine if r.names and r.repo == largest]
        if big:
            groups.append((f"[{part}] naming, {largest.split('/')[1]} only", big))
        groups.append((f"[{part}] names the answer", [r for r in mine if r.points]))
        groups.append((f"[{part}] names no answer", [r for r in mine if not r.points]))
    for label, mine in groups:
        print(figures(label, mine))
    print("naming / concept: the message names a file or an identifier the repository defines, "
          "or not;\nnames the answer / no answer (the issue's split): it names a file the "
          "commit changed,\nor an identifier found in one at the parent, or not")
    for step, label in enumerate(("pre-warm -> next pre-warm", "pre-warm -> its turn")):
        pairs = [r.prefix[step] for r in results if len(r.prefix) > step]
        if pairs:
            shares = [share for share, _ in pairs]
            print(f"\nStable prefix, {label}: the share of the request repeating the one before "
                  f"from the start (n={len(pairs)}): median {statistics.median(shares):.2f}, "
                  f"mean {mean(shares):.2f}, at least 0.9 in "
                  f"{mean([float(p >= 0.9) for p in shares]):.2f}; tokens after the common "
                  f"start: median {statistics.median(t for _, t in pairs):.0f}")
    budgets = sorted({b for r in results for b in r.curve})
    if not budgets:
        return
    print("\nRecall against tokens (region recall / median request tokens, per budget)")
    print(f"{'':<34} " + " ".join(f"{b:>13}" for b in budgets))
    for label, mine in groups:
        if not mine:
            continue
        cells = []
        for b in budgets:
            at = [r.curve[b] for r in mine if b in r.curve]
            median = statistics.median([t for _, t in at])
            cells.append(f"{mean([a for a, _ in at]):>5.2f} / {median:>5.0f}")
        print(f"{label:<34} " + " ".join(f"{c:>13}" for c in cells))


_KINDS = ("named", "defines", "uses", "edited", "earlier", "path", "words", "like commit",
          "changelog", "test of", "changes with")


def kind_of(reason: str) -> str:
    """A reason's kind: its label without what it names (`defines parse_header`: defines)."""
    return next((k for k in _KINDS if reason.startswith(k)), reason)


def reasons_report(results: list[Result]) -> None:
    """Per kind of reason and per rank: the files chosen, the share the commit changed, the
    changed files (existing at the parent) they brought into the context, and of those the ones
    with a line from inside the commit's hunks."""
    print("\nWhat each reason brings (chosen files, the share the commit changed, changed files "
          "sent)")
    rows: dict[str, list[int]] = {}
    for r in results:
        for i, rel in enumerate(r.chosen):
            first = 4 * (i // 4) + 1
            for key in (kind_of(r.reasons.get(rel, "")), f"rank {first:>2}-{first + 3}"):
                row = rows.setdefault(key, [0, 0, 0, 0])
                row[0] += 1
                row[1] += rel in r.changed
                row[2] += rel in r.shown
                row[3] += rel in r.regions
    ranks = sorted(k for k in rows if k.startswith("rank"))
    for key in [*(k for k in _KINDS if k in rows), *ranks]:
        picked, changed, sent, hit = rows[key]
        print(f"  {key:<12} {picked:>5} chosen  {changed / picked:>5.2f} changed  {sent:>4} "
              f"changed files sent, {hit:>4} with a changed line")
