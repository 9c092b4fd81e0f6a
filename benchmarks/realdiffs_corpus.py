"""The real-diffs corpus: where its cases come from, and the compact store they are prepared
into (outside the repository: nothing fetched is ever committed).

The manifest (benchmarks/realdiffs_manifest.json) names, per case, the published prediction it
comes from (repository, path and commit of the prediction file), the task's repository and base
commit, the files the diff names and the split (tuning or held-out). `prepare` reads those
sources from local snapshots of the public repositories (git directories under --mirror, as
OWNER+NAME/repo) or from copies of the prediction files under --predictions, and writes
CACHE/cases/MODEL/INSTANCE/{case.json, diff.txt, reply.txt, files/...}.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "realdiffs_manifest.json"
DEFAULT_CACHE = Path(os.environ.get("SPARK_PAIR_REALDIFFS_CACHE")
                     or Path.home() / ".cache" / "spark-pair-bench" / "realdiffs")
HELD_OUT_PERCENT = 30

FENCE_DIFF = re.compile(r"^```diff[ \t]*\n(.*?)^```", re.M | re.S)
FENCE_BLOCK = re.compile(r"^```diff[ \t]*\n.*?^```[^\n]*\n?", re.M | re.S)
HEADER = re.compile(r"^(?:---|\+\+\+) (?:[ab]/)?(\S+)")
GIT_HEADER = re.compile(r"^diff --git a/(\S+) b/(\S+)")


def split_of(instance_id: str) -> str:
    """The fixed split of a task: a hash of its instance id, so both models' diffs for one task
    fall in the same part (no task is seen while tuning and measured as held-out)."""
    h = int(hashlib.sha256(instance_id.encode()).hexdigest()[:8], 16)
    return "held-out" if h % 100 < HELD_OUT_PERCENT else "tuning"


def only_block(reply: str) -> str | None:
    """The reply's one ```diff block, fence lines included (what the model typed: the closing
    fence says where it ended), else None."""
    blocks = [m.group(0) for m in FENCE_BLOCK.finditer(reply)]
    return blocks[0] if len(blocks) == 1 else None


def named_paths(text: str) -> list[str]:
    """Repository paths the diff headers name, in order of first mention (no /dev/null)."""
    seen: dict[str, None] = {}
    for line in text.splitlines():
        m = GIT_HEADER.match(line)
        if m:
            seen.setdefault(m.group(1))
            seen.setdefault(m.group(2))
            continue
        m = HEADER.match(line)
        if m and m.group(1) != "/dev/null":
            seen.setdefault(m.group(1))
    return [p for p in seen if ".." not in p.split("/") and not p.startswith("/")]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def mirror_dir(mirror: Path, repo: str) -> Path:
    return mirror / repo.replace("/", "+") / "repo"


def git_show(git_dir: Path, commit: str, path: str) -> bytes | None:
    done = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"],
                          capture_output=True, timeout=60)
    return done.stdout if done.returncode == 0 else None


def source_text(src: dict, mirror: Path, predictions: Path | None) -> bytes | None:
    """A prediction file: from --predictions (DIR/OWNER+NAME/PATH) when there, else from the
    snapshot of its repository at the recorded commit."""
    if predictions is not None:
        local = predictions / src["repo"].replace("/", "+") / src["path"]
        if local.is_file():
            return local.read_bytes()
    return git_show(mirror_dir(mirror, src["repo"]), src["commit"], src["path"])


def case_texts(case: dict, blob: bytes) -> tuple[str | None, str | None]:
    """(diff, whole reply) of a case from its prediction file's bytes."""
    if case["format"] == "patch-file":
        return blob.decode("utf-8", "surrogateescape"), None
    for line in blob.decode("utf-8").splitlines():
        row = json.loads(line)
        if row.get("instance_id") != case["instance_id"]:
            continue
        reply = row.get("full_output") or None
        diff = only_block(reply) if reply and case["diff_from"] == "reply-block" else None
        return (diff if diff is not None else row.get("model_patch")), reply
    return None, None


class Missing(Exception):
    """Something the cache needs is not there; the message says what to fetch."""


def how_to_prepare(manifest: dict, cache: Path) -> str:
    repos = sorted({c["repo"] for c in manifest["cases"]}
                   | {s["repo"] for s in manifest["sources"].values()})
    return (f"the real-diffs cache is not prepared ({cache}).\n"
            "Fetch these public repositories as git snapshots into one folder (one "
            "OWNER+NAME/repo git directory each, e.g. with the search tool's fetch):\n  "
            + "\n  ".join(repos)
            + "\nthen prepare the cache (offline from then on):\n"
            "  python benchmarks/bench_realdiffs.py --prepare --mirror /work/.mirror "
            f"[--predictions DIR] [--cache {cache}]")


def prepare(manifest: dict, mirror: Path, predictions: Path | None, cache: Path,
            say=print) -> int:
    """Write the compact store; returns the number of cases prepared. Raises Missing, naming
    the snapshots to fetch, when some are not under `mirror`."""
    need = {c["repo"] for c in manifest["cases"]} | {
        s["repo"] for s in manifest["sources"].values()
        if predictions is None or not (predictions / s["repo"].replace("/", "+")).is_dir()}
    absent = sorted(r for r in need if not mirror_dir(mirror, r).is_dir())
    if absent:
        raise Missing(f"no snapshot under {mirror} of: {', '.join(absent)}\n"
                      + how_to_prepare(manifest, cache))
    cache.mkdir(parents=True, exist_ok=True)
    # a folder of its own per preparation: a run reading the previous one is not disturbed
    stamp = f"cases-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    blobs: dict[str, bytes] = {}
    done = 0
    problems: list[str] = []
    for case in manifest["cases"]:
        src = manifest["sources"][case["source"]]
        key = case["source"] + ":" + case.get("source_path", "")
        if key not in blobs:
            s = dict(src, path=case.get("source_path") or src["path"])
            blob = source_text(s, mirror, predictions)
            if blob is None:
                problems.append(f"{s['repo']}@{s['commit'][:12]}:{s['path']} not found")
                continue
            blobs[key] = blob
        diff, reply = case_texts(case, blobs[key])
        if diff is None or sha(diff) != case["diff_sha"]:
            problems.append(f"{case['id']}: the diff text differs from the manifest's")
            continue
        out = cache / stamp / case["id"]
        files = out / "files"
        git_dir = mirror_dir(mirror, case["repo"])
        missing = [p for p in case["paths"]
                   if (data := git_show(git_dir, case["base_commit"], p)) is None
                   or not _put(files / p, data)]
        if missing != case["absent"]:
            problems.append(f"{case['id']}: {case['repo']}@{case['base_commit'][:12]} lacks "
                            f"{missing} (expected {case['absent']})")
            continue
        out.mkdir(parents=True, exist_ok=True)
        (out / "diff.txt").write_text(diff, encoding="utf-8", errors="surrogateescape")
        if reply is not None:
            (out / "reply.txt").write_text(reply, encoding="utf-8")
        (out / "case.json").write_text(json.dumps(case, indent=1))
        done += 1
    for p in problems[:20]:
        say("  " + p)
    if problems:
        say(f"{len(problems)} case(s) not prepared")
    old = _cases_dir(cache)
    tmp = cache / "prepared.json.tmp"
    tmp.write_text(json.dumps({"cases": done, "folder": stamp,
                               "manifest_sha": sha(json.dumps(manifest, sort_keys=True))}))
    tmp.replace(cache / "prepared.json")
    for stale in cache.glob("cases-*"):  # keep the one just replaced for runs still reading it
        if stale.name not in (stamp, old.name if old else ""):
            shutil.rmtree(stale, ignore_errors=True)
    return done


def _cases_dir(cache: Path) -> Path | None:
    try:
        return cache / json.loads((cache / "prepared.json").read_text()).get("folder", "cases")
    except (OSError, ValueError, AttributeError):
        return None


def _put(path: Path, data: bytes) -> bool:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


def load_cases(cache: Path, which: str, models: list[str] | None) -> list[dict]:
    """The prepared cases of a set (tuning, held-out, all), with their texts."""
    out = []
    folder = _cases_dir(cache)
    if folder is None:
        return out
    for cj in sorted(folder.glob("*/*/case.json")):
        case = json.loads(cj.read_text())
        if which != "all" and case["split"] != which:
            continue
        if models and case["model"] not in models:
            continue
        case["dir"] = cj.parent
        case["diff"] = (cj.parent / "diff.txt").read_text(encoding="utf-8",
                                                          errors="surrogateescape")
        reply = cj.parent / "reply.txt"
        case["reply"] = reply.read_text(encoding="utf-8") if reply.is_file() else None
        out.append(case)
    return out
