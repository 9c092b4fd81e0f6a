"""Real model-typed diffs, applied by spark-pair, `git apply` (strict and lenient) and GNU
`patch --fuzz=2`: applied shares, byte-identical shares, spark-pair's refusals by cause, and
wrong writes (results a tool called applied that are not what the diff says).

    python benchmarks/bench_realdiffs.py --prepare --mirror /work/.mirror [--predictions DIR]
    python benchmarks/bench_realdiffs.py [--set tuning|held-out|all] [--model M] [-v]
                                         [--json FILE] [--cache DIR] [--timeout S]
                                         [--via inproc|cli] [--limit N] [--compare OLD]

The engine measured is the spark_pair that the running Python imports: run it with another
worktree's venv to measure that branch (`/work/wt/engine/.venv/bin/python
/work/wt/realdiffs/benchmarks/bench_realdiffs.py --set tuning`). The corpus (the manifest
beside this file) is described in benchmarks/realdiffs_build.py; its cache lives outside the
repository (default ~/.cache/spark-pair-bench/realdiffs, or $SPARK_PAIR_REALDIFFS_CACHE).
Tune on the tuning set only; the held-out set (30 % of the tasks, by a hash of the instance
id) is for the figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realdiffs_checks import check, compiles, overlapping, parse  # noqa: E402
from realdiffs_cli import CliSpark  # noqa: E402
from realdiffs_corpus import (  # noqa: E402
    DEFAULT_CACHE,
    FENCE_DIFF,
    MANIFEST,
    Missing,
    how_to_prepare,
    load_cases,
    prepare,
)
from realdiffs_tools import TOOLS, Outcome, fresh, make_base, run_external, run_spark  # noqa: E402

Via = tuple[CliSpark, str, list[str]] | None
AS_TYPED = ("git-apply", "patch-fuzz2")  # tools that never re-indent a line
SHORT = {"spark-pair": "spark", "git-apply": "git", "git-apply-lenient": "git-len",
         "patch-fuzz2": "patch"}


def judge(base: Path, text: str, out: Outcome) -> tuple[list[str], bool]:
    """Wrong-write problems of an applied outcome (empty: right, as far as the checks see), and
    whether some hunk was placed only with whitespace normalised. A whole reply with several
    diff blocks is right for a file when one block alone (a block that revises or repeats an
    earlier one), or the union of its blocks when none of them touches another's lines,
    explains the file."""
    if not out.applied:
        return [], False
    readings = [parse(text)] + [parse(b) for b in FENCE_DIFF.findall(text)]
    files = readings[0]
    problems = [f"{path}: changed, but the diff does not name it"
                for path in out.files if path not in files]
    loose = False
    for path in files:
        orig_f = base / path
        original = orig_f.read_text("utf-8", "surrogateescape") if orig_f.is_file() else ""
        after = out.files.get(path, orig_f.read_bytes() if orig_f.is_file() else None)
        if after is None:
            continue
        result = after.decode("utf-8", "surrogateescape")
        blocks = [r[path] for r in readings[1:] if path in r]
        union = [] if len(blocks) > 1 and overlapping(original, blocks) else [files[path]]
        verdicts = [check(original, result, fd) for fd in union + blocks]
        right = [v for v in verdicts if not v.wrong]
        if right:
            loose = loose or all(v.loose for v in right)
        else:
            problems += verdicts[0].problems
    return problems, loose


def run_text(base: Path, work: Path, text: str, timeout: float, via: Via = None) -> dict:
    """Every tool on one text: outcomes, wrong-write problems, byte-identity with spark-pair.
    `via`: (the CLI runner, this text's token, the case's paths) to run spark-pair as a user
    does; None: in this process."""
    res: dict = {}
    outs: dict[str, Outcome] = {}
    for tool in TOOLS:
        root = fresh(base, work, tool)
        if tool == "spark-pair" and via is not None:
            outs[tool] = via[0].run(root, via[1], via[2], timeout)
        elif tool == "spark-pair":
            outs[tool] = run_spark(root, text, timeout, work / "spark-data")
        else:  # a harness hands git and patch the block's body, not its fence lines
            outs[tool] = run_external(tool, root, unfenced(text), timeout)
        shutil.rmtree(root, ignore_errors=True)
    for tool, out in outs.items():
        problems, loose = judge(base, text, out)
        res[tool] = {"applied": out.applied, "cause": out.cause, "message": out.message,
                     "seconds": round(out.seconds, 4), "wrong": problems, "loose": loose}
    sp = outs["spark-pair"]
    for tool in TOOLS:
        _excuse_syntax(res[tool], tool, outs)
    for tool, out in outs.items():
        if tool != "spark-pair" and sp.applied and out.applied:
            res[tool]["same_as_spark"] = _same(base, sp, out)
    return res


def unfenced(text: str) -> str:
    """A text that is one fenced diff block, without its fence lines; any other as it is."""
    whole = text.rstrip("\n")
    if whole.startswith("```diff\n") and whole.endswith("\n```") and whole.count("```") == 2:
        return whole[len("```diff\n"):-3]
    return text


def _excuse_syntax(res: dict, tool: str, outs: dict[str, Outcome]) -> None:
    """A result that does not compile is the model's own text when a tool that writes the
    lines as typed (strict git apply, patch; not --ignore-whitespace) made a result of the same
    file that does not compile either: noted, not counted as a wrong write."""
    for p in list(res["wrong"]):
        if not p.endswith("the result does not compile"):
            continue
        path = p.split(":")[0]
        if any(o.applied and o.files.get(path) is not None
               and not compiles(o.files[path].decode("utf-8", "replace"), path)  # type: ignore[union-attr]
               for t, o in outs.items() if t != tool and t in AS_TYPED):
            res["wrong"].remove(p)
            res.setdefault("notes", []).append(p + " (nor does another tool's: the model's text)")


def _same(base: Path, a: Outcome, b: Outcome) -> bool:
    paths = set(a.files) | set(b.files)
    def get(o: Outcome, p: str) -> bytes | None:
        f = base / p
        return o.files[p] if p in o.files else (f.read_bytes() if f.is_file() else None)
    return all(get(a, p) == get(b, p) for p in paths)


def token(case: dict, kind: str) -> str:
    return f"[realdiffs {case['id']} {kind}]"


def run_case(case: dict, timeout: float, cli: CliSpark | None = None) -> dict:
    def via(kind: str) -> Via:
        return None if cli is None else (cli, token(case, kind), case["paths"])
    with tempfile.TemporaryDirectory(prefix="realdiffs-") as tmp:
        work = Path(tmp)
        base = make_base(case["dir"], work)
        row = {"id": case["id"], "model": case["model"], "split": case["split"],
               "repo": case["repo"], "blind": case.get("blind", False),
               "diff": run_text(base, work, case["diff"], timeout, via("diff"))}
        if case["reply"] is not None:
            row["reply"] = run_text(base, work, case["reply"], timeout, via("reply"))
    return row


# ---- report ---------------------------------------------------------------------------------

def summary(rows: list[dict], kind: str) -> dict:
    rows = [r for r in rows if kind in r]
    n = len(rows)
    out: dict = {"cases": n}
    if not n:
        return out
    for tool in TOOLS:
        got = [r[kind][tool] for r in rows]
        out[tool] = {"applied": sum(g["applied"] for g in got),
                     "wrong": sum(bool(g["wrong"]) for g in got),
                     "loose": sum(g["applied"] and not g["wrong"] and g["loose"] for g in got)}
        if tool != "spark-pair":
            both = [g for g in got if "same_as_spark" in g]
            out[tool]["both"] = len(both)
            out[tool]["identical"] = sum(g["same_as_spark"] for g in both)
    out["refusals"] = dict(Counter(r[kind]["spark-pair"]["cause"] for r in rows
                                   if not r[kind]["spark-pair"]["applied"]).most_common())
    secs = [r[kind]["spark-pair"]["seconds"] for r in rows]
    out["spark_median_s"] = round(statistics.median(secs), 4)
    return out


def pct(a: int, n: int) -> str:
    return f"{100 * a / n:5.1f}%" if n else "    -"


def table(title: str, groups: dict[str, dict]) -> list[str]:
    lines = [title, f"  {'model':<24}{'n':>4}  " + "  ".join(f"{SHORT[t]:>8}" for t in TOOLS)
             + "   identical (git/git-len/patch)   wrong (spark/git/git-len/patch)"
             + "   loose"]
    for name, s in groups.items():
        n = s["cases"]
        if not n:
            continue
        shares = "  ".join(f"{pct(s[t]['applied'], n):>8}" for t in TOOLS)
        ident = "/".join(pct(s[t]["identical"], s[t]["both"]).strip() for t in TOOLS[1:])
        wrong = "/".join(str(s[t]["wrong"]) for t in TOOLS)
        lines.append(f"  {name:<24}{n:>4}  {shares}   {ident:<31} {wrong:<31} "
                     f"{s['spark-pair']['loose']}")
    return lines


def report(rows: list[dict], sets: list[str]) -> tuple[list[str], dict]:
    lines: list[str] = []
    data: dict = {}
    models = sorted({r["model"] for r in rows})
    for s in sets:
        part = [r for r in rows if s == "all" or r["split"] == s]
        data[s] = {}
        for kind, label in (("diff", "diffs"), ("reply", "whole replies")):
            groups = {m: summary([r for r in part if r["model"] == m], kind) for m in models}
            groups["overall"] = summary([r for r in part if not r.get("blind")], kind)
            groups = {k: v for k, v in groups.items() if v["cases"]}
            if not groups:
                continue
            data[s][kind] = groups
            lines += table(f"\n[{s}] {label}: applied share (overall leaves out -blind)",
                           groups)
        for kind, label in (("diff", "diffs"), ("reply", "whole replies")):
            refusals = data[s].get(kind, {}).get("overall", {}).get("refusals")
            if refusals:
                lines.append(f"  spark-pair refusals on the {label} ({s}), by cause:")
                lines += [f"    {c:>3}  {cause}" for cause, c in refusals.items()]
        diffs = data[s].get("diff", {}).get("overall", {})
        if diffs:
            lines.append(f"  spark-pair median time per diff: {diffs['spark_median_s']} s")
    return lines, data


def verbose(rows: list[dict]) -> list[str]:
    lines = ["", "cases (S G L P = spark-pair, git apply, lenient, patch; + applied, ~ applied "
             "with a hunk whose old side is not in the file as typed, - not, ! applied WRONG)"]
    for r in rows:
        for kind in ("diff", "reply"):
            if kind not in r:
                continue
            res = r[kind]
            marks = " ".join(_mark(res[t]) for t in TOOLS)
            sp = res["spark-pair"]
            why = "; ".join(sp["wrong"]) if sp["wrong"] else (sp["message"] or sp["cause"])
            if sp["applied"] and not sp["wrong"]:
                why = "; ".join(sp.get("notes", []))
            lines.append(f"  {marks}  {r['split']:<8} {kind:<5} {r['id']:<48} {why}"[:250])
    return lines


def compare(rows: list[dict], before: dict) -> list[str]:
    """Cases whose spark-pair outcome differs from an earlier --json run's."""
    was = {(r["id"], k): r[k]["spark-pair"] for r in before["cases"] for k in ("diff", "reply")
           if k in r}
    lines = [f"\nchanged since the earlier run ({before.get('engine', '?')}):"]
    for r in rows:
        for kind in ("diff", "reply"):
            old = was.get((r["id"], kind))
            if kind not in r or old is None:
                continue
            new = r[kind]["spark-pair"]
            a, b = _mark(old), _mark(new)
            if a != b or (not new["applied"] and old["cause"] != new["cause"]):
                why = "; ".join(new["wrong"]) or new["message"] or new["cause"]
                lines.append(f"  {a} -> {b}  {r['split']:<8} {kind:<5} {r['id']:<48} {why}"[:250])
    return lines if len(lines) > 1 else lines + ["  none"]


def _mark(res: dict) -> str:
    if not res["applied"]:
        return "-"
    return "!" if res["wrong"] else "~" if res.get("loose") else "+"


def engine_line() -> str:
    import spark_pair
    return f"engine: spark_pair {spark_pair.__version__} from {Path(spark_pair.__file__).parent}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prepare", action="store_true", help="build the cache from snapshots")
    ap.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--predictions", type=Path, default=None,
                    help="folder with copies of prediction files (OWNER+NAME/PATH)")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--set", dest="which", choices=("tuning", "held-out", "all"), default="all")
    ap.add_argument("--model", action="append", help="only this model (repeatable)")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per tool per case")
    ap.add_argument("--via", choices=("inproc", "cli"), default="inproc",
                    help="spark-pair in this process (fast) or as `spark-pair run --apply` "
                         "against the simulator (a process per text)")
    ap.add_argument("--limit", type=int, default=0, help="at most this many cases")
    ap.add_argument("--json", type=Path, help="write the numbers (and each case) here")
    ap.add_argument("--compare", type=Path, help="list the cases whose spark-pair outcome "
                    "differs from this earlier --json output")
    ap.add_argument("-v", "--verbose", action="store_true", help="each case's outcome")
    args = ap.parse_args()
    manifest = json.loads(MANIFEST.read_text())
    if args.prepare:
        t0 = time.monotonic()
        try:
            n = prepare(manifest, args.mirror, args.predictions, args.cache)
        except Missing as exc:
            print(exc, file=sys.stderr)
            sys.exit(2)
        print(f"prepared {n} of {len(manifest['cases'])} cases into {args.cache} "
              f"in {time.monotonic() - t0:.1f} s")
        sys.exit(0 if n == len(manifest["cases"]) else 1)
    if not (args.cache / "prepared.json").is_file():
        print(how_to_prepare(manifest, args.cache), file=sys.stderr)
        sys.exit(2)
    if shutil.which("patch") is None:
        print("GNU patch is missing: apt-get update && apt-get install -y patch",
              file=sys.stderr)
        sys.exit(2)
    cases = load_cases(args.cache, args.which, args.model)
    if args.limit:
        cases = cases[:args.limit]
    print(engine_line() + (" (through `spark-pair run --apply`)" if args.via == "cli" else ""))
    t0 = time.monotonic()
    cli = None
    if args.via == "cli":
        cli = CliSpark({token(c, k): c[k] for c in cases for k in ("diff", "reply")
                        if c[k] is not None})
    try:
        rows = [run_case(c, args.timeout, cli) for c in cases]
    finally:
        if cli is not None:
            cli.close()
    wall = time.monotonic() - t0
    sets = ["tuning", "held-out", "all"] if args.which == "all" else [args.which]
    lines, data = report(rows, sets)
    if args.verbose:
        lines += verbose(rows)
    if args.compare:
        lines += compare(rows, json.loads(args.compare.read_text()))
    lines.append(f"\n{len(rows)} cases in {wall:.1f} s")
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps({"engine": engine_line(), "set": args.which,
                                         "summary": data, "cases": rows}, indent=1))


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # the output was piped into `head`
        sys.stderr.close()
