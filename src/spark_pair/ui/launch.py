"""Starting the app from the command line (only when stdin and stdout are a terminal)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .demo import DemoSimulator
    from .sessions import Choice


def is_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def run_app(cwd: Path | None = None, *, overrides: dict[str, str] | None = None,
            prompt: str = "", files: list[str] | None = None, demo: DemoSimulator | None = None,
            root: Path | None = None, session: Choice | None = None) -> None:
    """Open the app in the repository of `cwd` (git top level; a plain folder works too)."""
    from ..base.dirs import home_override
    from ..workspace.files import find_root

    home_override()  # a SPARK_PAIR_HOME that is a file: said before the screen opens
    from .app import SparkPairApp
    from .screens.main import Launch
    from .textual_private import install_chord_parser

    root = root or find_root(cwd or Path.cwd())
    launch = Launch(root=root, overrides=dict(overrides or {}), prompt=prompt,
                    files=list(files or []), demo=demo)
    if session is not None:  # (what -c / --resume ask for; a new session otherwise)
        launch.session = session
    install_chord_parser()  # two alt chords in one terminal read stay two chords
    SparkPairApp(launch).run()
