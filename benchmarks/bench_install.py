"""Install footprint: a fresh venv's size, package count and `pip install` time.

    .venv/bin/python benchmarks/bench_install.py [--extras plot] [--runs 2] [--rev HEAD]

Builds each venv from `git archive REV` (the committed tree), with the pip cache as it is (run
once to warm it, then compare). Prints one line per run and the ratio of the lean install to the
one with the given extras. Takes about a minute a run; nothing is left behind.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def size_mb(path: Path) -> float:
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            full = os.path.join(folder, name)
            if not os.path.islink(full):
                total += os.path.getsize(full)
    return total / 1e6


def one_install(rev: str, extras: str) -> tuple[float, float, int]:
    """(seconds for pip install, venv MB, packages) of a fresh venv."""
    with tempfile.TemporaryDirectory(prefix="bench-install-") as tmp:
        src, venv = Path(tmp) / "src", Path(tmp) / "venv"
        src.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True,
                                 capture_output=True, timeout=60).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True, timeout=60)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
        python = str(venv / "bin" / "python")
        target = f"{src}[{extras}]" if extras else str(src)
        start = time.perf_counter()
        subprocess.run([python, "-m", "pip", "install", "-q", target], check=True,
                       capture_output=True, timeout=1800)
        seconds = time.perf_counter() - start
        listed = subprocess.run([python, "-m", "pip", "list", "--format=freeze"], check=True,
                                capture_output=True, text=True, timeout=120).stdout
        return seconds, size_mb(venv), len(listed.split())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extras", default="plot", help="extras to compare with (e.g. plot)")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--rev", default="HEAD")
    args = parser.parse_args()
    if shutil.which("git") is None:
        sys.exit("git is needed (the venvs are built from git archive)")
    results: dict[str, list[tuple[float, float, int]]] = {"": [], args.extras: []}
    for run in range(args.runs):
        for extras in results:
            seconds, mb, packages = one_install(args.rev, extras)
            results[extras].append((seconds, mb, packages))
            name = f"[{extras}]" if extras else "lean"
            print(f"run {run + 1} {name:>8}: install {seconds:6.1f} s, venv {mb:6.1f} MB, "
                  f"{packages} packages", flush=True)
    lean, full = results[""], results[args.extras]
    t_lean = statistics.median(r[0] for r in lean)
    t_full = statistics.median(r[0] for r in full)
    print(f"median install: lean {t_lean:.1f} s, [{args.extras}] {t_full:.1f} s "
          f"(lean/full {t_lean / t_full:.2f}); venv: lean {lean[0][1]:.0f} MB, "
          f"[{args.extras}] {full[0][1]:.0f} MB (lean/full {lean[0][1] / full[0][1]:.2f})")


if __name__ == "__main__":
    main()
