"""The request's layout keeps its start from one request to the next (workspace.sentorder):
files in the last request's order, the map after them, the instruction last, a cut
file's head without its spans; a draft's pre-warm and its turn laid out alike."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from spark_pair.workspace import Workspace, build_context
from spark_pair.workspace.preview import preview
from spark_pair.workspace.sentorder import SentOrder

pytestmark = pytest.mark.timeout(20)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.py").write_text(f"{name} = 1\n")
    (tmp_path / "big.py").write_text("".join(f"v{i} = {i}\n" for i in range(3000)))
    return tmp_path


def sent(request) -> str:
    return request.new_input[-1].content


def test_files_keep_the_last_request_s_order(repo: Path) -> None:
    ws = Workspace(repo)
    first = sent(ws.build("rename a", ["a.py", "b.py"], followup=False)[0])
    # the next draft ranks a new file first and drops none: the earlier ones keep their places
    second = sent(ws.build("rename a and c", ["c.py", "b.py", "a.py"], followup=False)[0])
    assert second.index("### a.py") < second.index("### b.py") < second.index("### c.py")
    common = len(os.path.commonprefix([first, second]))
    assert second[:common].endswith("b = 1\n```\n")  # both files a.py and b.py repeat
    # a file no longer sent leaves its place; the others close up, in the same order
    third = sent(ws.build("only c and a", ["a.py", "c.py"], followup=False)[0])
    assert third.index("### a.py") < third.index("### c.py") and "### b.py" not in third


def test_the_order_is_the_order_given_for_new_files() -> None:
    order = SentOrder()
    assert order.arrange({"x": "X", "y": "Y"}) == "XY"
    assert order.arrange({"z": "Z", "y": "Y2", "x": "X"}) == "XY2Z"
    assert order.arrange({"w": "W", "z": "Z"}) == "ZW"  # x and y went: z keeps the lead
    assert order.arrange({"x": "X", "w": "W", "z": "Z"}) == "ZWX"  # x comes back: at the end


def test_a_cut_file_repeats_its_first_regions_from_the_start(repo: Path) -> None:
    narrow = build_context(repo, ["big.py"], 300, focus={"big.py": [10]})
    wider = build_context(repo, ["big.py"], 600, focus={"big.py": [10, 2000]})
    assert narrow.partial["big.py"] != wider.partial["big.py"]
    assert wider.text.startswith("### big.py (parts, numbered; other lines omitted)\n```\n"
                                 "   1| v0 = 0\n")
    assert wider.text.endswith("```\n(3000 lines in all)\n")  # the length after the block
    common = len(os.path.commonprefix([narrow.text, wider.text]))
    assert "  10| v9 = 9\n" in wider.text[:common]  # the spans differ, the first region repeats


def test_a_line_added_below_keeps_a_cut_file_s_block_from_its_start(repo: Path) -> None:
    before = build_context(repo, ["big.py"], 300, focus={"big.py": [10]})
    with (repo / "big.py").open("a") as f:
        f.write("v3000 = 3000\n")  # one more line, far below the regions sent
    after = build_context(repo, ["big.py"], 300, focus={"big.py": [10]})
    assert after.partial["big.py"] == before.partial["big.py"]
    common = len(os.path.commonprefix([before.text, after.text]))
    assert before.text[:common].endswith("```\n(300")  # only the length after it differs


def test_the_map_goes_after_the_files_and_before_the_instruction(repo: Path) -> None:
    ctx = build_context(repo, ["a.py"], 1000)
    ctx.map = "Repository map (...):\nb.py\n"
    from spark_pair.workspace import user_message

    text = user_message("rename a", ctx)
    assert text.index("### a.py") < text.index("Repository map") < text.index("Instruction:")
    assert text.endswith("Instruction:\nrename a\n")


def test_a_drafts_pre_warm_and_its_turn_are_laid_out_alike(repo: Path) -> None:
    ws = Workspace(repo)
    ws.build("rename a", ["a.py", "b.py"], followup=False)
    ws.finish(ws.build("rename a", ["a.py", "b.py"], followup=False)[0], "reply", [])
    warm = preview(ws, "rename b and c", ["c.py", "b.py"], followup=False)
    turn, _ = ws.build("rename b and c", ["c.py", "b.py"], followup=False)
    assert sent(warm) == sent(turn)
    assert sent(turn).index("### b.py") < sent(turn).index("### c.py")  # b.py was sent before
