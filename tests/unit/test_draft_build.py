"""A settled draft is built once: the files pane's figures and the pre-warm's request share the
build while the draft, its files and the workspace's state are the same, in a real git repo."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from spark_pair.workspace import Workspace
from spark_pair.workspace.preview import preview, preview_context

pytestmark = pytest.mark.timeout(20)
DRAFT = "rename v1500 in big.py"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "a.py").write_text("a = 1\n")
    (tmp_path / "big.py").write_text("".join(f"v{i} = {i}\n" for i in range(3000)))
    return tmp_path


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The prompts of the workspace builds made (a spy on the one build every path takes)."""
    made: list[str] = []
    real = Workspace._build

    def counted(self, prompt, files, followup, entries):  # type: ignore[no-untyped-def]
        made.append(prompt)
        return real(self, prompt, files, followup, entries)

    monkeypatch.setattr(Workspace, "_build", counted)
    return made


def sent(request) -> str:
    return request.new_input[-1].content


def test_the_pane_and_the_pre_warm_of_one_draft_share_a_build(repo: Path,
                                                              builds: list[str]) -> None:
    ws = Workspace(repo, budget_tokens=1500)
    order = list(ws.order._last)
    ctx = preview_context(ws, DRAFT, ["a.py", "big.py"], followup=False)
    assert ws.order._last == order  # the pane's build leaves the order as it was
    warm = preview(ws, DRAFT, ["a.py", "big.py"], followup=False)
    assert builds == [DRAFT]  # one build for both
    assert ctx is not None and "big.py" in ctx.partial and ctx.text in sent(warm)
    turn, _ = ws.build(DRAFT, ["a.py", "big.py"], followup=False)
    assert sent(warm) == sent(turn)  # what the turn sends, laid out alike


def test_a_change_of_the_draft_a_file_or_the_workspace_builds_again(repo: Path,
                                                                    builds: list[str]) -> None:
    ws = Workspace(repo, budget_tokens=1500)
    files = ["a.py", "big.py"]
    preview_context(ws, DRAFT, files, followup=False)
    preview_context(ws, DRAFT + " now", files, followup=False)  # another draft
    assert len(builds) == 2
    (repo / "a.py").write_text("a = 2\n")  # the same size, at once: its content differs
    assert "a = 2" in sent(preview(ws, DRAFT, files, followup=False))
    assert len(builds) == 3
    ws.finish(ws.build(DRAFT, files, followup=False)[0], "a reply", [])
    built = len(builds)  # (the turn's own build)
    request = preview(ws, DRAFT, files, followup=True)
    assert len(builds) == built + 1 and "a reply" in str(request.history)
    ws.tell("Outcome of your previous reply: rejected by the user, not applied.")
    assert "rejected by the user" in sent(preview(ws, DRAFT, files, followup=True))
    assert len(builds) == built + 2
    preview_context(ws, DRAFT, files, followup=True)  # nothing changed since: shared
    assert len(builds) == built + 2
