"""What a headless run is asked to do: its options (flags and the prompt) and its -f paths."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..base.errors import UsageError

MAX_FOLDER_FILES = 200


@dataclass(slots=True)
class RunOptions:
    """What a headless run was asked to do (flags and the prompt)."""

    prompt: str
    stdin: bool = False  # the prompt was read from stdin (`run -`)
    files: list[str] = field(default_factory=list)
    apply: bool = False
    allow_delete: bool = False
    allow_rename: bool = False
    json: bool = False
    deltas: bool = False
    timeout: float | None = None
    overrides: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    meter: bool = True  # the one-line meter on stderr (text mode)
    env: dict[str, str] | None = None
    prewarm: bool = False  # open the WebSocket while the run starts up
    ask: bool = False  # a question (AI? comment): the prose reply is the answer
    # called with the exit code once the result is out, the files and the journal are
    # written and the request record is stored; it does not return (the command's quick
    # exit: no graceful close of the connection, the watcher or the request log)
    leave: Callable[[int], None] | None = None
    # when the run began (time.monotonic; the process's start for the command): --timeout
    # and the JSON lines' times count from here
    started: float | None = None
    # choose files by itself besides `files` (when [context] auto is on too)
    auto_context: bool = True
    check: str = ""  # run this after the applied turn (--check); empty: no check
    fix: int = 0  # fix rounds when the check fails (--fix)
    escalate: bool = False  # the last fix round goes to [model] stronger (--escalate)
    continue_: bool = False  # carry on the repository's newest stored session
    session: str | None = None  # carry on (or begin) the stored session of this name
    keep: bool = True  # store the run's session (watch and demo runs keep none)
    commit: bool = False  # commit the applied turn (--commit)


def flag_overrides(base_url: str | None, model: str | None, transport: str | None
                   ) -> dict[str, str]:
    """The flags given on the command line, as config overrides ("section.field" -> value)."""
    out = {"model.base_url": base_url, "model.name": model, "session.transport": transport}
    return {k: v for k, v in out.items() if v}


def repo_paths(root: Path, cwd: Path, files: list[str]) -> list[str]:
    """-f paths (relative to cwd, or absolute) as repo paths, a folder as the files under it;
    anything outside the repository is refused."""
    real_root = root.resolve()
    out = []
    for name in files:
        full = Path(os.path.abspath(cwd / name))
        full = full.resolve() if full.exists() else full
        try:
            rel = full.relative_to(real_root).as_posix()
        except ValueError:
            raise UsageError(f"-f {name}: outside the repository {root}",
                             hint="only files inside the repository go into the context") from None
        if rel == ".git" or rel.startswith(".git/"):
            raise UsageError(f"-f {name}: not a file of the repository",
                             hint="name files inside the repository, not .git")
        if full.is_dir():
            out.extend(_files_under(root, rel, name))
        else:
            out.append(rel)
    return list(dict.fromkeys(out))


def _files_under(root: Path, rel: str, name: str) -> list[str]:
    """The listed (not ignored) files under a folder given to -f."""
    from ..workspace.files import list_files

    prefix = "" if rel in ("", ".") else rel + "/"
    found = [f for f in list_files(root) if f.startswith(prefix)]
    if not found:
        raise UsageError(f"-f {name}: the folder holds no files spark-pair may read",
                         hint="ignored files (.gitignore) are left out; name files instead")
    if len(found) > MAX_FOLDER_FILES:
        raise UsageError(
            f"-f {name}: the folder holds {len(found)} files (limit {MAX_FOLDER_FILES})",
            hint="name a smaller folder or the files themselves",
        )
    return found
