"""spark-pair applied as a user runs it (`--via cli`): `spark-pair run TOKEN --apply --json` in
the case's git repository against the project's simulator on 127.0.0.1, which answers each
case's token with that case's text. Slower than the in-process path (a process per text) but
it goes through every layer: the session, its review and, where a branch has one, its repair
round (turned off when the CLI has --no-repair: the simulator would not answer it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from realdiffs_tools import Outcome, changed_paths, shape, snapshot


class CliSpark:
    def __init__(self, texts: dict[str, str]) -> None:
        """`texts`: token -> the reply the simulator sends when the prompt holds the token."""
        self.tmp = Path(tempfile.mkdtemp(prefix="realdiffs-cli-"))
        script = self.tmp / "script.json"
        script.write_text(json.dumps({"replies": [{"match": k, "text": v}
                                                  for k, v in texts.items()]}))
        from spark_pair.sim.process import SimProcess

        self.sim = SimProcess("--script", str(script), tps=0, ttft_ms=0).start()
        help_text = subprocess.run(self._cli() + ["run", "--help"], capture_output=True,
                                   text=True, timeout=60).stdout
        self.extra = ["--no-repair"] if "--no-repair" in help_text else []

    def _cli(self) -> list[str]:
        return [sys.executable, "-c", "from spark_pair.entry import main; main()"]

    def close(self) -> None:
        self.sim.stop()

    def run(self, root: Path, token: str, paths: list[str], timeout: float) -> Outcome:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("SPARK_PAIR_", "OPENAI_"))}
        env.update(SPARK_PAIR_HOME=str(self.tmp / "home"), SPARK_PAIR_BASE_URL=self.sim.base_url,
                   SPARK_PAIR_MODEL="gpt-5.3-codex-spark", SPARK_PAIR_API_KEY="sk-bench-not-a-key")
        files = [a for p in paths if (root / p).is_file() for a in ("-f", p)]
        t0 = time.monotonic()
        try:
            done = subprocess.run(self._cli() + ["run", f"{token} apply the reply", "--apply",
                                                 "--json", *self.extra, *files],
                                  cwd=root, env=env, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            return Outcome(False, cause="timed out", seconds=timeout)
        secs = time.monotonic() - t0
        error = end = None
        for line in done.stdout.splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if item.get("type") == "error":
                error = item
            elif item.get("type") == "end":
                end = item
        if done.returncode == 0 and end is not None and end.get("status") == "applied":
            return Outcome(True, snapshot(root, changed_paths(root, root.parent / "base")),
                           seconds=secs)
        if error is not None:
            first = (error.get("message") or "").splitlines()[0] if error.get("message") else ""
            return Outcome(False, cause=f"{error.get('kind')}: {shape(first)}", message=first,
                           seconds=secs)
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        status = end.get("status") if end else f"exit {done.returncode}"
        return Outcome(False, cause=f"{status}: {shape(last)}", message=last, seconds=secs)
