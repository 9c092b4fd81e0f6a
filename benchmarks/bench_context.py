"""The automatic context on real commits: recall and precision at the default budget, and the
time to build it for a 5,000-file repository. Prints numbers.

Each commit of `context_commits.json` is a task: its message (subject and body, trailers
removed) is the instruction, the repository at its parent is the input, and the files it
changed are the answer. The context is built as `spark-pair run` builds it (a Workspace with the
automatic context at the default [context] settings, no file added, nothing edited, no earlier
turn), then:

- recall: the share of the changed files (that existed at the parent) whose relevant lines
  were in the context: the whole file, or regions covering every line the commit changed or
  removed (for a pure insertion, the line it follows or precedes). Per commit, then the mean;
- precision: the share of the automatically chosen files that the commit changed;
- both per repository, per set (tuning / held-out), overall, and on the commits whose message
  names a file or an identifier the repository defines at the parent ("naming");
- region recall: the share of the changed files of which the whole file or a line from inside
  one of the commit's hunks was sent; file recall: the share sent at all; the request's input
  tokens (system prompt, map, files, instruction: what the server reads), median and largest;
  for naming and concept (the other) instructions, per set, and for the largest repository's
  naming ones; then region recall and the median request at each of `--budgets` (the curve the
  default budget is chosen from). `--budget N` sets the budget of the main figures, `--max-files
  N` the number of automatic files (`--budget 400000 --max-files 60 --budgets ''`: every file
  the rules find, sent whole, the ceiling of recall from choosing regions and budgets);
- per kind of reason (`defines`, `like commit`, ...) and per rank: the files chosen, the share
  the commit changed, and the changed files they brought (what a rule is worth);
- with `--prefix`, the stable prefix: each subject typed in three steps in one workspace, the
  first two built as a draft's pre-warm builds them, the last as the turn: the share of the
  second pre-warm and of the turn that repeats the request before it from its start (what a
  server's prompt cache can reuse), and the tokens after that common start.

The repositories are read from git directories fetched beforehand (bare is fine), found under
`--mirror DIR` (as OWNER+NAME/repo, OWNER+NAME, OWNER/NAME, ...) or given one by one with
`--repo OWNER/NAME=PATH`; a checkout of each is made under `--work` with `git worktree add`
(which notes it in that git directory). What is missing is named, with how to fetch it.

    .venv/bin/python benchmarks/bench_context.py --mirror DIR [--work DIR]
        [--only requests,cobra] [--set tuning|held-out] [--commits N] [--langs] [--time]
        [--time-only] [--rounds 5] [--budget N] [--max-files N] [--budgets 2000,8000]
        [--json out.json] [-v]
    .venv/bin/python benchmarks/bench_context.py --select [--per-repo 20]   # rewrite the list

`--langs` also runs the repositories in other languages than Python without tree-sitter (the
definitions then come from the patterns). `--time` adds the timings on the largest repository:
the first index, the index read back from its cache, and the context after the index as the app
builds it (edited files from the watcher) and as `run` does (edited files from git status; the
path words and the recent history, kept per snapshot of the index, made again as in a new
process: the history read back from the index's cache file).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from spark_pair.base.config import Settings
from spark_pair.protocol.metrics import estimate_request_tokens
from spark_pair.workspace import gitlog, layout, symbols
from spark_pair.workspace.autocontext import auto_context_of
from spark_pair.workspace.context import Workspace, limits_of
from spark_pair.workspace.index import RepoIndex
from spark_pair.workspace.prompt import Context

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # its siblings, when imported
from context_report import LEGEND, reasons_report, regions_report, report  # noqa: E402
from context_select import RULE, git, instruction_of, select  # noqa: E402

DATA = HERE / "context_commits.json"


# --- the list of commits -------------------------------------------------------------------
def run_select(args: argparse.Namespace) -> int:
    data = json.loads(DATA.read_text())
    for repo in data["repos"]:
        gitdir = find_gitdir(repo["name"], args)
        if gitdir is None:
            print(missing(repo["name"]), file=sys.stderr)
            continue
        head = git(gitdir, "rev-parse", "HEAD").strip()
        repo["head"] = head
        repo["files"] = len(git(gitdir, "ls-tree", "-r", "--name-only", head).splitlines())
        repo["commits"] = select(gitdir, head, args.per_repo)
        print(f"{repo['name']}: {len(repo['commits'])} commits from {head[:12]}")
    data["rule"] = RULE
    data["per_repo"] = args.per_repo
    DATA.write_text(json.dumps(data, indent=1) + "\n")
    return 0


# --- checkouts -----------------------------------------------------------------------------
def find_gitdir(name: str, args: argparse.Namespace) -> Path | None:
    """The git directory of `name` (OWNER/NAME): given with --repo, or under --mirror as
    OWNER+NAME/repo, OWNER+NAME, OWNER+NAME.git, OWNER/NAME or NAME.git (bare or not)."""
    given = dict(item.split("=", 1) for item in args.repo)
    if name in given:
        places = [Path(given[name])]
    elif args.mirror is not None:
        flat = name.replace("/", "+")
        places = [args.mirror / flat / "repo", args.mirror / flat, args.mirror / f"{flat}.git",
                  args.mirror / name, args.mirror / f"{name.split('/')[1]}.git"]
    else:
        places = []
    for path in places:
        if (path / "HEAD").is_file() and (path / "objects").is_dir():
            return path
        if (path / ".git").exists():
            return path / ".git"
    return None


def missing(name: str) -> str:
    flat = name.replace("/", "+")
    return (f"missing: {name}: fetch it, e.g. `git clone --bare https://github.com/{name} "
            f"DIR/{flat}/repo`, then pass --mirror DIR (or --repo {name}=PATH)")


def checkout(gitdir: Path, work: Path, name: str, sha: str) -> Path:
    """A worktree of `gitdir` at `sha` (made once, then moved from commit to commit)."""
    tree = work / name.replace("/", "+")
    if not (tree / ".git").exists():
        work.mkdir(parents=True, exist_ok=True)
        git(gitdir, "worktree", "prune")
        git(gitdir, "worktree", "add", "-f", "--detach", str(tree), sha)
    else:
        git(gitdir, "checkout", "-q", "-f", "--detach", sha, cwd=tree)
        git(gitdir, "clean", "-q", "-fdx", cwd=tree)
    return tree


def workspace(tree: Path, index: RepoIndex, settings: Settings) -> Workspace:
    """A Workspace with the automatic context, made as `spark-pair run` makes it (its index
    given: one per repository, refreshed at each commit)."""
    auto = auto_context_of(tree, settings, None)
    assert auto is not None
    auto.index.close()
    auto.index = index
    return Workspace(tree, auto=auto, **limits_of(settings))


# --- one commit ----------------------------------------------------------------------------
@dataclass
class Result:
    repo: str
    sha: str
    instruction: str
    answer: list[str]  # changed files that existed at the parent
    chosen: list[str]  # the automatically chosen files
    reasons: dict[str, str]
    recalled: list[str]  # answer files whose relevant lines were in the context
    shown: list[str]  # answer files in the context at all (whole or regions)
    names: bool  # the message names a file or an identifier the repository defines
    ms: float = 0.0
    code_answer: list[str] = field(default_factory=list)  # the source files of `answer`
    changed: set[str] = field(default_factory=set)  # every file the commit touched
    regions: list[str] = field(default_factory=list)  # answer files with a changed line sent
    tokens: int = 0  # the request's input tokens (system prompt, map, files, instruction)
    curve: dict[int, tuple[float, int]] = field(default_factory=dict)  # budget -> (region
    # recall, request tokens)
    prefix: list[tuple[float, int]] = field(default_factory=list)  # the second pre-warm, then
    # the turn: (the share of its request that repeats the previous one's start, tokens after)
    cuts: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # answer files sent
    # as regions: the regions sent
    spans: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # answer files: the
    # lines the commit changed (relevant_lines)
    points: bool = False  # the split: the message names a changed file or an
    # identifier found in one

    @property
    def region_recall(self) -> float:
        return len(self.regions) / len(self.answer)

    @property
    def file_recall(self) -> float:
        return len(self.shown) / len(self.answer)

    @property
    def recall(self) -> float:
        return len(self.recalled) / len(self.answer)

    @property
    def code_recall(self) -> float | None:
        if not self.code_answer:
            return None
        return len([p for p in self.recalled if p in self.code_answer]) / len(self.code_answer)

    @property
    def precision(self) -> float | None:
        if not self.chosen:
            return None
        return len([p for p in self.chosen if p in self.changed]) / len(self.chosen)


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.M)


def relevant_lines(tree: Path, parent: str, sha: str, rel: str) -> list[tuple[int, int]]:
    """(first, last) spans of the parent's lines the commit changed or removed; a pure
    insertion after line a is (a, a + 1) and counts as covered when either line is shown."""
    diff = git("", "diff", "-U0", "--no-renames", "--no-color", parent, sha, "--", rel, cwd=tree)
    spans = []
    for m in _HUNK.finditer(diff):
        start, count = int(m.group(1)), int(m.group(2) or "1")
        spans.append((start, start + count - 1) if count else (max(start, 1), start + 1))
    return spans


def covered(spans: list[tuple[int, int]], regions: list[tuple[int, int]], insertion: bool
            ) -> bool:
    for a, b in spans:
        if insertion and b == a + 1:  # an insertion point: one of its two lines is enough
            if not any(x <= a <= y or x <= b <= y for x, y in regions):
                return False
        elif not all(any(x <= n <= y for x, y in regions) for n in range(a, b + 1)):
            return False
    return True


_NAMEISH = re.compile(r"[\w./-]*\w\.[A-Za-z]\w{0,7}\b")
_CODEISH = re.compile(r"`([^`\n]+)`|(\b[A-Za-z_][\w.]*\w)(\(\))?")
_KEYWORDS = ("def|class|function|func|fn|struct|type|interface|enum|trait|const|var|let|val|"
             "module|impl|macro_rules!")


def touched(spans: list[tuple[int, int]], regions: list[tuple[int, int]]) -> bool:
    """Whether a region holds a line from inside one of the commit's hunks (for a pure
    insertion, one of the two lines around it)."""
    return any(x <= b and a <= y for a, b in spans for x, y in regions)


def _names_a_file(instruction: str, files: set[str]) -> bool:
    """Whether the message names one of `files` (its path or file name)."""
    bases = {p.rsplit("/", 1)[-1] for p in files}
    for m in _NAMEISH.finditer(instruction):
        token = m.group(0).strip("./")
        if token in files or token in bases or any(p.endswith("/" + token) for p in files):
            return True
    return False


def _code_words(instruction: str) -> set[str]:
    """The words of the message written as code: in backticks, with `()`, a dot, an underscore
    or a capital inside, or capitalised inside a sentence."""
    words: set[str] = set()
    for m in _CODEISH.finditer(instruction):
        if m.group(1) is not None:
            words.update(re.findall(r"[A-Za-z_]\w{2,}", m.group(1)))
            continue
        token, call = m.group(2), m.group(3)
        for word in token.split("."):
            if len(word) < 3 or not re.fullmatch(r"[A-Za-z_]\w*", word):
                continue
            inner_cap = re.search(r"[a-z0-9][A-Z]|[A-Z][a-z]", word[1:]) is not None
            before = instruction[max(0, m.start() - 2):m.start()].strip()
            mid_cap = word[0].isupper() and m.start() > 0 and before not in ("", ".", ":")
            if call or "." in token or "_" in word.strip("_") or inner_cap or mid_cap:
                words.add(word)
    return words


def names_something(tree: Path, instruction: str, files: set[str]) -> bool:
    """Whether the message names a file of the repository (its path or file name) or an
    identifier the repository defines. Judged here with git grep, not by the code under test
    (so the subset stays the same whatever the index finds): an identifier is a word written as
    code (`_code_words`); it is defined where a source file has a keyword and the name
    (`def name`, `func (r T) name`, `const name`), an assignment to it or to an attribute of
    that name (`name =`, `x.name =`, `name: T =`), or a field or key declared with it at the
    start of a line (`name: T`)."""
    if _names_a_file(instruction, files):
        return True
    words = _code_words(instruction)
    if not words:
        return False
    alt = "|".join(sorted(words))
    patterns = [rf"\b({_KEYWORDS})\s+(\([^)]*\)\s*)?\**({alt})\b",
                rf"(^|[^\w.])(\w+\.)?({alt})\s*(:[^:=]*)?=([^=]|$)",
                rf"^\s*(pub\s+|readonly\s+)?({alt})\??\s*:"]
    specs = [f"*{suffix}" for suffix in sorted(symbols.SOURCE_SUFFIXES)]
    args = ["grep", "-q", "-E", "-I"]
    for pattern in patterns:
        args += ["-e", pattern]
    done = subprocess.run(["git", *args, "--", *specs], cwd=tree, capture_output=True)
    return done.returncode == 0


def names_the_answer(tree: Path, instruction: str, answer: Sequence[str]) -> bool:
    """The issue's split: whether the message names a file the commit changed, or an
    identifier (a word written as code, `_code_words`) found in one of them at the parent
    (git grep, whole words)."""
    if not answer:
        return False
    if _names_a_file(instruction, set(answer)):
        return True
    words = _code_words(instruction)
    if not words:
        return False
    args = ["grep", "-q", "-w", "-F", "-I"]
    for word in sorted(words):
        args += ["-e", word]
    done = subprocess.run(["git", *args, "--", *answer], cwd=tree, capture_output=True)
    return done.returncode == 0


def repeated(before: str, after: str) -> tuple[float, int]:
    """The share of `after` that repeats `before` from its first character, and the tokens
    after that common start (what a server with a prompt cache still reads)."""
    from spark_pair.protocol.metrics import tokens_for_chars

    n = len(os.path.commonprefix([before, after]))
    return n / max(len(after), 1), tokens_for_chars(len(after) - n)


def drafts_prefix(tree: Path, index: RepoIndex, settings: Settings, instruction: str
                  ) -> list[tuple[float, int]]:
    """The instruction's subject typed in three steps (half, three quarters, all of its
    words), in one workspace: the first two built as a draft's pre-warm builds them
    (workspace.preview), the last as the turn's request. For the second pre-warm and for the
    turn: the share of the request that repeats the previous one from the start (what a
    server's prompt cache can reuse) and the tokens after it."""
    from spark_pair.workspace.preview import preview

    words = instruction.splitlines()[0].split()
    if len(words) < 4:
        return []
    ws = workspace(tree, index, settings)
    texts = []
    for cut in (len(words) // 2, (3 * len(words)) // 4, len(words)):
        draft = " ".join(words[:cut])
        plan = ws.plan(draft, [])
        assert plan is not None
        if cut < len(words):
            request = preview(ws, draft, plan.found.paths(), followup=False)
        else:
            request, _ = ws.build(draft, plan.found.paths(), followup=False)
        texts.append(request.instructions + "".join(m.content for m in request.new_input))
    return [repeated(a, b) for a, b in zip(texts, texts[1:], strict=False)]


def measure(repo: str, tree: Path, index: RepoIndex, commit: dict,
            settings: Settings, budgets: Sequence[int] = (), prefix: bool = False) -> Result:
    sha, parent = commit["sha"], commit["parent"]
    instruction = instruction_of(git("", "log", "-1", "--format=%B", sha, cwd=tree))
    status = git("", "diff-tree", "--no-commit-id", "-r", "--name-status", sha, cwd=tree)
    rows = [ln.split("\t") for ln in status.splitlines() if ln]
    changed = {r[-1] for r in rows}
    answer = sorted(r[1] for r in rows if r[0] == "M")
    index.refresh()
    started = time.perf_counter()
    ws = workspace(tree, index, settings)
    plan = ws.plan(instruction, [])
    assert plan is not None
    chosen = plan.found.paths()
    request, _ = ws.build(instruction, chosen, followup=False)
    ms = (time.perf_counter() - started) * 1000
    spans = {rel: relevant_lines(tree, parent, sha, rel) for rel in answer}

    def sent(ctx: Context) -> tuple[list[str], list[str], list[str]]:
        recalled, shown, regions = [], [], []
        for rel in answer:
            if rel in ctx.whole:
                recalled.append(rel)
                shown.append(rel)
                regions.append(rel)
            elif rel in ctx.partial:
                shown.append(rel)
                if covered(spans[rel], ctx.partial[rel], True):
                    recalled.append(rel)
                if touched(spans[rel], ctx.partial[rel]):
                    regions.append(rel)
        return recalled, shown, regions

    ctx = ws.last_context
    assert ctx is not None
    recalled, shown, regions = sent(ctx)
    tokens = estimate_request_tokens(request)
    curve: dict[int, tuple[float, int]] = {}
    for budget in budgets:
        ws.budget_tokens = budget
        req, _ = ws.build(instruction, chosen, followup=False)
        assert ws.last_context is not None
        curve[budget] = (len(sent(ws.last_context)[2]) / len(answer),
                         estimate_request_tokens(req))
    code = [p for p in answer if os.path.splitext(p)[1].lower() in symbols.SOURCE_SUFFIXES]
    return Result(repo, sha, instruction, answer, chosen, plan.found.reasons(), recalled, shown,
                  names_something(tree, instruction, set(index.files)), ms, code, changed,
                  regions, tokens, curve,
                  drafts_prefix(tree, index, settings, instruction) if prefix else [],
                  {rel: list(ctx.partial[rel]) for rel in answer if rel in ctx.partial}, spans,
                  names_the_answer(tree, instruction, answer))


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


# --- timing --------------------------------------------------------------------------------
def spread(values: list[float]) -> str:
    return (f"min {min(values):7.1f}  median {statistics.median(values):7.1f}  "
            f"max {max(values):7.1f} ms  (n={len(values)})")


class Watched:
    """What a front end's watcher tells the workspace (`spark-pair` and `watch`): the files
    edited on disk, kept in memory (none here: a clean checkout)."""

    def recent(self) -> list[str]:
        return []

    def mark_turn(self) -> set[str]:
        return set()


def timing(tree: Path, name: str, instructions: list[str], rounds: int,
           settings: Settings) -> None:
    print(f"\nTime on {name} ({load()})")
    with tempfile.TemporaryDirectory() as tmp:
        firsts = []
        n_files = 0
        for r in range(rounds):
            index = RepoIndex(tree, Path(tmp) / f"first{r}.sqlite3")
            t = time.perf_counter()
            index.refresh()
            firsts.append((time.perf_counter() - t) * 1000)
            n_files = len(index.files)
            index.close()
        print(f"  files listed: {n_files}; tree-sitter "
              f"{'installed' if _has_tree_sitter() else 'missing'}")
        print(f"  first index (every file read, cache written):  {spread(firsts)}  {load()}")
        cache = Path(tmp) / "first0.sqlite3"
        again: list[float] = []
        times: dict[str, list[float]] = {"app": [], "run": [], "plan": [], "build": []}
        for _ in range(rounds):
            index = RepoIndex(tree, cache)
            t = time.perf_counter()
            index.refresh()
            again.append((time.perf_counter() - t) * 1000)
            for text in instructions:
                for how in ("app", "run"):
                    ws = workspace(tree, index, settings)
                    if how == "app":
                        ws.watcher = Watched()  # type: ignore[assignment]
                    else:  # a new process: what is kept per snapshot of the index is made again
                        layout._last_words = None
                        gitlog._last = None
                    t0 = time.perf_counter()
                    plan = ws.plan(text, [])
                    t1 = time.perf_counter()
                    assert plan is not None
                    ws.build(text, plan.found.paths(), followup=False)
                    t2 = time.perf_counter()
                    times[how].append((t2 - t0) * 1000)
                    if how == "app":
                        times["plan"].append((t1 - t0) * 1000)
                        times["build"].append((t2 - t1) * 1000)
            index.close()
        print(f"  index from its cache (a new process; stat only): {spread(again)}  {load()}")
        print(f"  context, the app (edited files from the watcher): {spread(times['app'])}  "
              f"{load()}")
        print(f"    of which choosing the files and the map:       {spread(times['plan'])}")
        print(f"    of which reading and fitting the files:        {spread(times['build'])}")
        print(f"  context, run (edited files from git status, the path words and the "
              f"history read again as in a new process):\n"
              f"                                                   {spread(times['run'])}  "
              f"{load()}")
        median = statistics.median(times["app"])
        print(f"  target: the context <= 200 ms after the first index: the app's median "
              f"{median:.0f} ms = {median / 200:.2f} x the target")


# --- main ----------------------------------------------------------------------------------
def without_tree_sitter() -> None:
    sys.modules["tree_sitter_language_pack"] = None  # type: ignore[assignment]
    symbols._parsers.clear()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", type=Path, default=None,
                    help="folder holding the fetched repositories (OWNER+NAME/repo, ...)")
    ap.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME=PATH",
                    help="the git directory of one repository")
    ap.add_argument("--work", type=Path,
                    default=Path(tempfile.gettempdir()) / "spark-pair-bench-context",
                    help="where the checkouts are made (kept between runs)")
    ap.add_argument("--only", default="", help="comma-separated repositories (name or part)")
    ap.add_argument("--set", choices=("tuning", "held-out"), default=None)
    ap.add_argument("--commits", type=int, default=0, help="at most N commits per repository")
    ap.add_argument("--langs", action="store_true",
                    help="also run the non-Python repositories without tree-sitter")
    ap.add_argument("--time", action="store_true", help="also time the 5,000-file repository")
    ap.add_argument("--time-only", action="store_true")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--prefix", action="store_true",
                    help="also the share of a draft's request repeating the previous draft's")
    ap.add_argument("--budget", type=int, default=0,
                    help="the budget of the main figures (default: the [context] default)")
    ap.add_argument("--max-files", type=int, default=0,
                    help="automatic files at most (default: the [context] default); with a "
                         "large --budget, what the rules find at all")
    ap.add_argument("--budgets", default="2000,4000,6000,8000,12000,16000,32000",
                    help="budgets of the recall/tokens curve (comma-separated; '' for none)")
    ap.add_argument("--json", type=Path, default=None, help="write every result here")
    ap.add_argument("-v", "--verbose", action="store_true", help="a line per commit")
    ap.add_argument("--select", action="store_true", help="rewrite the list of commits")
    ap.add_argument("--per-repo", type=int, default=20)
    args = ap.parse_args()
    if args.select:
        return run_select(args)

    data = json.loads(DATA.read_text())
    settings = Settings()
    ctx = settings.context
    if args.budget:
        ctx.budget_tokens = args.budget
    if args.max_files:
        ctx.max_files = args.max_files
    repos = [r for r in data["repos"]
             if (not args.only or any(o in r["name"] for o in args.only.split(",")))
             and (args.set is None or r["set"] == args.set)]
    found: dict[str, Path] = {}
    for repo in repos:
        gitdir = find_gitdir(repo["name"], args)
        if gitdir is None:
            print(f"{missing(repo['name'])}; skipped", file=sys.stderr)
        else:
            found[repo["name"]] = gitdir
    if not found:
        print("no repository to measure", file=sys.stderr)
        return 2
    print(f"automatic context at the default budget: budget_tokens {ctx.budget_tokens}, "
          f"map_tokens {ctx.map_tokens}, max_files {ctx.max_files}")
    print(f"tree-sitter-language-pack: {'installed' if _has_tree_sitter() else 'missing'}")
    print(f"commits: {DATA.name} ({data['per_repo']} per repository; rule: see the file)")

    if not args.time_only:
        results = evaluate(repos, found, args, settings)
        report(results, repos, f"Recall and precision ({load()})")
        print(LEGEND)
        regions_report(results, repos, data["repos"])
        reasons_report(results)
        if args.json is not None:
            args.json.write_text(json.dumps([r.__dict__ | {"changed": sorted(r.changed)}
                                             for r in results], indent=1))
        if args.langs:
            other = [r for r in repos if r["lang"] != "python" and r["name"] in found]
            without_tree_sitter()
            plain = evaluate(other, found, args, settings)
            names = {r["name"] for r in other}
            report([r for r in results if r.repo in names], other,
                   "Non-Python repositories with tree-sitter")
            report(plain, other, f"Non-Python repositories without tree-sitter (patterns) "
                                 f"({load()})")
    if args.time or args.time_only:
        big = max((r for r in data["repos"] if r["name"] in found or args.time_only),
                  key=lambda r: r.get("files", 0))
        gitdir = found.get(big["name"]) or find_gitdir(big["name"], args)
        if gitdir is None:
            print(f"{missing(big['name'])} (for the timings)", file=sys.stderr)
            return 2
        tree = checkout(gitdir, args.work, big["name"], big["head"])
        texts = [instruction_of(git("", "log", "-1", "--format=%B", c["sha"], cwd=tree))
                 for c in big["commits"][:10]]
        timing(tree, big["name"], texts, args.rounds, settings)
    return 0


def _has_tree_sitter() -> bool:
    try:
        import tree_sitter_language_pack  # noqa: F401
    except ImportError:
        return False
    return True


def evaluate(repos: list[dict], found: dict[str, Path], args: argparse.Namespace,
             settings: Settings) -> list[Result]:
    results: list[Result] = []
    budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
    for repo in repos:
        gitdir = found.get(repo["name"])
        if gitdir is None:
            continue
        commits = repo["commits"][:args.commits] if args.commits else repo["commits"]
        index: RepoIndex | None = None
        for commit in commits:
            tree = checkout(gitdir, args.work, repo["name"], commit["parent"])
            index = index or RepoIndex(tree)
            r = measure(repo["name"], tree, index, commit, settings, budgets, args.prefix)
            results.append(r)
            if args.verbose:
                mark = "N" if r.names else " "
                print(f"  {repo['name']:<20} {r.sha[:10]} {mark} recall {r.recall:.2f} "
                      f"regions {r.region_recall:.2f} {r.tokens:>6} tok "
                      f"chosen {len(r.chosen):>2} {r.ms:6.0f} ms  {r.instruction[:60]!r}")
                for rel in r.answer:
                    how = ("ok" if rel in r.recalled else "some lines" if rel in r.regions
                           else "regions miss" if rel in r.shown else "missing")
                    print(f"      {how:<12} {rel}  {r.reasons.get(rel, '')}")
        if index is not None:
            index.close()
    return results


if __name__ == "__main__":
    raise SystemExit(main())
