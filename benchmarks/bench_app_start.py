"""Start-up of the app: `spark-pair` on a pseudo-terminal in a git repo, against the simulator.

Prints, over several runs, the seconds from the process start until the first screen is drawn
(the prompt is usable) and until the header shows the pre-warmed WebSocket as connected, and
the CPU seconds the process had used by its first screen (wall time on a machine shared with
other work is mostly waiting for a core; the CPU time is what an idle machine would take).
Target: first screen <= 1 s.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.ptyrun import PtyProcess  # noqa: E402

from spark_pair.sim.process import SimProcess  # noqa: E402

RUNS = 5


def main() -> None:
    cli = str(Path(sys.executable).parent / "spark-pair")
    with tempfile.TemporaryDirectory() as tmp, SimProcess(tps=0, ttft_ms=0) as sim:
        root = Path(tmp) / "proj"
        root.mkdir()
        (root / "a.py").write_text("x = 1\n")
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("SPARK_PAIR_")}
        env.update(SPARK_PAIR_HOME=str(Path(tmp) / "home"), SPARK_PAIR_BASE_URL=sim.base_url,
                   SPARK_PAIR_TRANSPORT="ws", SPARK_PAIR_API_KEY="bench")
        paint, connected, cpu = [], [], []
        for _ in range(RUNS):
            app = PtyProcess([cli], cwd=str(root), env=env, cols=120, rows=40)
            try:
                paint.append(app.read_until("Live diff"))
                cpu.append(_cpu_s(app.proc.pid))
                connected.append(app.read_until("connected"))
                app.send("\x11")
                app.wait()
            finally:
                app.close()
    for name, values in (("first screen (prompt usable)", paint),
                         ("CPU used by the first screen", cpu),
                         ("WebSocket pre-warmed (header: connected)", connected)):
        print(f"{name:42s} min {min(values) * 1000:6.0f} ms   median "
              f"{statistics.median(values) * 1000:6.0f} ms   max {max(values) * 1000:6.0f} ms")
    wall, busy = statistics.median(paint), statistics.median(cpu)
    print(f"target: first screen <= 1.0 s: wall {wall:.2f} s ({wall / 1.0:.2f} of the budget), "
          f"CPU {busy:.2f} s ({busy / 1.0:.2f} of the budget); load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
