"""The working tree: git-aware files, the watcher, AI comments, prompt, context and history.

Public API (plain Python; no textual or rich):

    find_root(cwd=None) -> Path                   git top level of cwd, or cwd outside git
    list_files(root) -> list[str]                 tracked + untracked-not-ignored, '/' paths
    IgnoreRules(root).is_ignored(rel) -> bool     cached; .git/ .venv/ node_modules/ __pycache__
    read_text(root, rel, max_bytes=1_000_000) -> str | None   None: missing; UsageError:
                                                  binary, too large, unreadable
    Watcher(root, debounce_ms=50)                 async start()/stop(), async with
        .subscribe(cb(paths: set[str])) -> unsubscribe    change batches (repo-relative)
        .subscribe_ai(cb(list[AIComment])) -> unsubscribe AI!/AI? comments newly appeared
        .watch(cb) -> async context manager       fits Session(watch=watcher.watch)
        .mark_turn() -> set[str]                  changed since the last mark; new mark
        .changed_since(mark=None) -> set[str]; .mark -> int
        .scan_ai_comments(paths) -> list[AIComment]   remember existing comments
    find_ai_comments(rel, text) -> list[AIComment(path, line, kind "do"|"ask", text)]
    SYSTEM_PROMPT; estimate_tokens(text) -> int (chars/4)
    build_context(root, files, budget_tokens, *, query="", focus=None) -> Context
        Context.text/.tokens/.whole/.partial{path: [(a, b)]}/.missing/.omitted{path: why}/.texts
    user_message(instruction, context) -> str
    History(max_turns).add(instruction, reply, sent=None); .messages(full=False) -> [Message]
    ContextSnapshot(); file_diff(rel, old, new) -> str; changed_lines(old, new) -> [int]
    followup_input(root, changed_files, snapshots) -> str   diffs vs what the model saw
    Workspace(root, *, budget_tokens=8000, history_turns=6, watcher=None, chained=None,
              max_tokens=None, temperature=None, files=None)
        .build(prompt, files, *, followup) -> (TurnRequest, {path: content hash})
        .build_now(...) -> the same, or None   no read: from prepared files if stat says so
        .prepare(files) -> Prepared(tokens, again_in_s, missing)   reads ahead (in a thread)
        .finish(request, reply, applied_paths)    the session's `WorkspaceLike` protocol
        .last_context -> Context; .history; .snapshot; .files (FileCache); .reset()
    FileCache(root).refresh(rels) / .fresh(rels)  file texts kept current, checked by stat
    checkrun.run_check(command, cwd, timeout_s=...) -> CheckResult   the configured check
                                                  ([review] check) run in the repository
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .aicomments import AIComment, find_ai_comments
    from .context import Prepared, Workspace
    from .filecache import FileCache
    from .files import IgnoreRules, find_root, list_files, read_text
    from .prompt import (
        SYSTEM_PROMPT,
        Context,
        ContextSnapshot,
        History,
        build_context,
        changed_lines,
        estimate_tokens,
        file_diff,
        followup_input,
        user_message,
    )
    from .watcher import Watcher


# each name loads its module on first use: a one-shot `run` builds its request from the context
# and prompt modules before asyncio (which the watcher needs) is loaded
_HOMES = {
    "AIComment": "aicomments", "find_ai_comments": "aicomments", "Workspace": "context",
    "Prepared": "context", "FileCache": "filecache",
    "IgnoreRules": "files", "find_root": "files", "list_files": "files", "read_text": "files",
    "SYSTEM_PROMPT": "prompt", "Context": "prompt", "ContextSnapshot": "prompt",
    "History": "prompt", "build_context": "prompt", "changed_lines": "prompt",
    "estimate_tokens": "prompt", "file_diff": "prompt", "followup_input": "prompt",
    "user_message": "prompt", "Watcher": "watcher",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "AIComment",
    "Context",
    "ContextSnapshot",
    "FileCache",
    "History",
    "IgnoreRules",
    "Prepared",
    "SYSTEM_PROMPT",
    "Watcher",
    "Workspace",
    "build_context",
    "changed_lines",
    "estimate_tokens",
    "file_diff",
    "find_ai_comments",
    "find_root",
    "followup_input",
    "list_files",
    "read_text",
    "user_message",
]
