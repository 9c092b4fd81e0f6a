"""`spark-pair demo` in the app: the simulator as a child process with the demo's script."""

from __future__ import annotations

import json
from pathlib import Path

from ..sim.demo_project import script
from ..sim.process import SimProcess

DEMO_MODEL = "gpt-5.3-codex-spark"
DEMO_KEY = {"SPARK_PAIR_API_KEY": "demo-key-not-secret"}


class DemoSimulator:
    """Started in a worker (it takes a moment); stopped when the app closes."""

    def __init__(self, root: Path, *, tps: float, ttft_ms: float, transport: str = "auto",
                 extra_args: tuple[str, ...] = ()) -> None:
        self.root = root
        self.tps = tps
        self.ttft_ms = ttft_ms
        self.transport = transport
        self.extra_args = extra_args
        self.script_file = root.parent / (root.name + "-sim.json")
        self.env = dict(DEMO_KEY)
        self.sim: SimProcess | None = None

    def start(self) -> dict[str, str]:
        """Start the simulator; the settings that point the app at it."""
        self.script_file.write_text(json.dumps(script()), encoding="utf-8")
        self.sim = SimProcess("--script", str(self.script_file), *self.extra_args,
                              tps=self.tps, ttft_ms=self.ttft_ms).start()
        return {"model.base_url": self.sim.base_url, "model.name": DEMO_MODEL,
                "session.transport": self.transport}

    def stop(self) -> None:
        if self.sim is not None:
            self.sim.stop()
            self.sim = None
        self.script_file.unlink(missing_ok=True)
