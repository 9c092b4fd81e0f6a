"""`spark-pair demo`: one real turn, offline, against the built-in simulator in a scratch repo."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import click

from ...base.exitcodes import report_errors
from ...protocol.events import Transport


def make_repo(parent: Path | None = None) -> Path:
    """A scratch git repository holding the demo project, committed."""
    from ...base.errors import UsageError
    from ...base.git import run_git
    from ...sim.demo_project import FILES

    root = Path(tempfile.mkdtemp(prefix="spark-pair-demo-", dir=parent))
    for rel, text in FILES.items():
        (root / rel).write_text(text, encoding="utf-8")
    config = {"user.name": "spark-pair demo", "user.email": "demo@localhost",
              "commit.gpgsign": "false", "init.defaultBranch": "main"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "demo project"]):
        res = run_git(root, *args, config=config, timeout=30)
        if res is None:
            break  # no git: spark-pair works in a plain folder too
        if res.returncode != 0:
            raise UsageError(f"could not make the scratch repository in {root}: git "
                             f"{args[0]} failed: {res.stderr.decode(errors='replace').strip()}")
    return root


@click.command("demo")
@click.option("--tps", default=1200.0, show_default=True, type=float,
              help="Simulated tokens per second.")
@click.option("--ttft-ms", default=150.0, show_default=True, type=float,
              help="Simulated time to first token.")
@click.option("--transport", type=click.Choice(["auto", *(t.value for t in Transport)]),
              default="auto", show_default=True, help="Transport to the simulator.")
@click.option("--dir", "parent", type=click.Path(file_okay=False, path_type=Path),
              help="Make the scratch repository under this folder (default: the temp folder).")
@click.option("--json", "as_json", is_flag=True, help="JSON lines on stdout, as `run --json`.")
@click.option("--headless", is_flag=True,
              help="Print the turn instead of opening the app (the default without a terminal).")
@report_errors
def command(tps: float, ttft_ms: float, transport: str, parent: Path | None,
            as_json: bool, headless: bool) -> None:
    """Make a scratch git repo with a small project and start the simulated Spark-class
    endpoint on 127.0.0.1 (no key, no network). On a terminal the app opens in that repo and
    the scripted turn starts by itself; review it with the keys shown. Without a terminal (or
    with --headless / --json) one headless turn runs with the meter on stderr, shows the diff,
    applies it and prints where the repo is. Nothing outside the scratch repo is touched."""
    from ...base.dirs import home_override
    from ...ui.launch import is_terminal

    home_override()  # a SPARK_PAIR_HOME that is a file: said once, before anything starts
    if not (headless or as_json) and is_terminal():
        _app_demo(tps, ttft_ms, transport, parent)
        return
    from ...headless.options import RunOptions
    from ...headless.runner import main
    from ...sim.demo_project import CONTEXT_FILES, PROMPT, script
    from ...sim.process import SimProcess

    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    root = make_repo(parent)
    script_file = root.parent / (root.name + "-sim.json")
    script_file.write_text(json.dumps(script()), encoding="utf-8")
    err = sys.stderr
    err.write(f"spark-pair demo: scratch repo {root}\n")
    err.write(f"spark-pair demo: starting the simulator ({tps:g} tok/s, TTFT {ttft_ms:g} ms)\n")
    try:
        with SimProcess("--script", str(script_file), tps=tps, ttft_ms=ttft_ms) as sim:
            err.write(f"spark-pair demo: simulator at {sim.base_url}\n")
            err.write(f"spark-pair demo: prompt: {PROMPT}\n")
            err.flush()
            opts = RunOptions(prompt=PROMPT, files=list(CONTEXT_FILES),
                              apply=True, allow_delete=True, allow_rename=True,
                              json=as_json, timeout=60.0, cwd=root, prewarm=True,
                              overrides={"model.base_url": sim.base_url,
                                         "model.name": "gpt-5.3-codex-spark",
                                         "session.transport": transport},
                              env={"SPARK_PAIR_API_KEY": "demo-key-not-secret"})
            code = main(opts)
    finally:
        script_file.unlink(missing_ok=True)
    err.write(exit_note(root))
    if code:
        sys.exit(code)


def _app_demo(tps: float, ttft_ms: float, transport: str, parent: Path | None) -> None:
    from ...sim.demo_project import CONTEXT_FILES, PROMPT
    from ...ui.demo import DemoSimulator
    from ...ui.launch import run_app

    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    root = make_repo(parent)
    run_app(root=root, prompt=PROMPT, files=list(CONTEXT_FILES),
            demo=DemoSimulator(root, tps=tps, ttft_ms=ttft_ms, transport=transport))
    sys.stderr.write(exit_note(root))


def own_command() -> str:
    """How to run spark-pair again from another folder: its name when that is on PATH,
    else the path it was started by (the README installs into .venv/bin)."""
    import os
    import shlex
    import shutil

    argv0 = sys.argv[0]
    name = Path(argv0).name
    found = shutil.which(name) if name.startswith("spark-pair") else None
    if found and Path(found).resolve() == Path(argv0).resolve():
        return name
    if name.startswith("spark-pair") and Path(argv0).exists():
        return shlex.quote(os.path.abspath(argv0))
    beside = Path(sys.executable).parent / "spark-pair"  # (started another way: the venv's)
    return shlex.quote(str(beside)) if beside.exists() else "spark-pair"


def exit_note(root: Path) -> str:
    """What the demo really did to its repository (from the undo journal), and the commands
    that show it or take it back."""
    import shlex

    from ...base.printable import shown
    from ...edits.journal import Journal
    from ...edits.journal.record import TurnKind

    turns = Journal(root).list_turns()  # newest first
    cmd, at = own_command(), f"cd {shlex.quote(str(root))} &&"
    lines = [f"spark-pair demo: the repo is at {root}"]
    if not turns:
        lines.append("  nothing was written: no turn was applied")
    elif turns[0].kind is TurnKind.UNDO:
        lines += [f"  applied, then undone: {', '.join(map(shown, turns[0].files))} are as "
                  "they were", f"  {at} {cmd} redo   # apply it again"]
    else:
        files = sorted({f for t in turns if t.kind is not TurnKind.UNDO and not t.undone
                        for f in t.files})
        lines += [f"  applied: {len(files)} file(s) changed ({', '.join(map(shown, files))})",
                  f"  {at} git status --short   # what the turn changed",
                  f"  {at} {cmd} undo   # put it back exactly"]
    return "\n".join(lines) + "\n"
