"""The request's start after a person edits a large file far below the lines sent. Prints
numbers.

    .venv/bin/python benchmarks/bench_edit_prefix.py [--lines 3000] [--budget 2000]

A real git repository in a temporary folder holds a large module (cut into regions by the
budget) and a small one. The first turn sends the large module; a line is then added at its
end (below every region sent) and the next turn sends both, unchained (every turn resends its
files: HTTP) and chained (WebSocket: the new files and the diffs of those changed on disk).
Printed for each: the share of the second user message that repeats the first's from its start
(what a server's prompt cache keyed on the prompt's first bytes reuses) and the characters
after that common start. Run it with PYTHONPATH=OTHER/src for another source tree.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path

from spark_pair.workspace import Workspace


def measure(lines: int, budget: int, chained: bool) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        (root / "big.py").write_text("".join(f"v{i} = {i}\n" for i in range(lines)))
        (root / "small.py").write_text("s = 1\n")
        ws = Workspace(root, budget_tokens=budget, chained=lambda: chained)
        first = ws.build("change v10", ["big.py"], followup=False)[0]
        ws.finish(first, "(the reply)", [])
        with (root / "big.py").open("a") as f:
            f.write(f"v{lines} = {lines}\n")  # far below the regions sent
        second = ws.build("now small.py too", ["big.py", "small.py"], followup=True)[0]
    a, b = first.new_input[-1].content, second.new_input[-1].content
    n = len(os.path.commonprefix([a, b]))
    return n / max(1, len(b)), len(b) - n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=3000)
    ap.add_argument("--budget", type=int, default=2000)
    args = ap.parse_args()
    for chained in (False, True):
        share, after = measure(args.lines, args.budget, chained)
        how = "chained  " if chained else "unchained"
        print(f"{how} repeated from the start {share:.2f}, characters after it {after}")


if __name__ == "__main__":
    main()
