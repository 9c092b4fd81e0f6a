"""A file the request sends cut: the files pane lists the line spans sent and why under it; at
80x24, where the pane is folded away, the live diff says it. The simulator is a real process and
the repository the demo's, with a large module in the context and a small budget."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.apps import make_app, screen_text, until

from spark_pair.sim.process import SimProcess
from spark_pair.ui.widgets.files import FilesPane, cut_rows
from spark_pair.ui.widgets.prompt import Prompt

PROMPT = "rename helper_1500 to helper_x"


def big_module(root: Path, functions: int = 3000) -> None:
    (root / "helpers.py").write_text("".join(
        f"def helper_{n}(value):\n    return value * {n}\n\n" for n in range(functions)))


def drafting_app(repo: Path, sim: SimProcess):
    big_module(repo)
    return make_app(repo, sim, prompt="", files=(),
                    **{"context.budget_tokens": "1500", "context.map_tokens": "0"})


async def drafted(pilot, app) -> Callable[[], Any]:
    """Type a draft naming helper_1500; returns the large file's row as the pane has it (its
    own spans known)."""
    await until(pilot, lambda: app.main.driver.session is not None, "the repository open")
    app.main.query_one(Prompt).focus()
    app.main.query_one(Prompt).value = "rename helper_1500 in helpers.py"
    pane = app.main.query_one(FilesPane)

    def big() -> Any:
        return next((c for c in pane.chosen if c.path == "helpers.py" and c.regions), None)

    await until(pilot, big, "the draft's own spans")
    return big


async def send(pilot, app) -> dict:
    """Send PROMPT; what the files pane was told the request sent cut."""
    await until(pilot, lambda: app.main.driver.session is not None, "the repository open")
    app.main.query_one(Prompt).focus()
    app.main.query_one(Prompt).value = PROMPT
    await pilot.press("enter")
    await until(pilot, lambda: app.main.query_one(FilesPane).cut, "the request")
    return app.main.query_one(FilesPane).cut


@pytest.mark.parametrize("size", [(160, 50), (80, 24)])
async def test_a_file_sent_cut_shows_its_spans_and_why(repo: Path, sim: SimProcess,
                                                       size: tuple[int, int]) -> None:
    big_module(repo)
    app = make_app(repo, sim, prompt="", files=("helpers.py",),
                   **{"context.budget_tokens": "1500", "context.auto": "false"})
    async with app.run_test(size=size) as pilot:
        cut = await send(pilot, app)
        why, regions = cut["helpers.py"]
        assert why == "added" and regions[0][0] == 1  # its head, then around the named lines
        assert any(a <= 4501 <= b for a, b in regions)  # def helper_1500 is line 4501
        spans = ", ".join(f"{a}-{b}" for a, b in regions)
        await until(pilot, lambda: "lines 1-" in screen_text(app), "the spans on screen")
        text = screen_text(app)
        if size[0] >= 100:  # in the files pane, under the file
            pane = app.main.query_one(FilesPane)
            rows = cut_rows(regions, why, pane.content_size.width - 4)
            assert all(row in text for row in rows)
            assert "sent in part" not in text
        else:  # the pane is folded away: the live diff's note says it
            assert "sent in part: helpers.py lines 1-" in text
            assert spans.split(", ")[0] in text and "(added)" in text


def test_the_spans_wrap_and_a_long_list_is_cut() -> None:
    rows = cut_rows([(1, 40), (88, 120), (300, 301), (900, 950)], "defines parse", 20)
    assert rows == ["lines 1-40, 88-120,", "300-301, 900-950", "(defines parse)"]
    many = cut_rows([(n, n + 1) for n in range(1, 400, 10)], "added", 20)
    assert len(many) == 3 and many[-1].endswith("…")


async def test_a_terminal_narrowed_after_the_request_gets_the_note(repo: Path,
                                                                  sim: SimProcess) -> None:
    big_module(repo)
    app = make_app(repo, sim, prompt="", files=("helpers.py",),
                   **{"context.budget_tokens": "1500", "context.auto": "false"})
    async with app.run_test(size=(200, 50)) as pilot:
        cut = await send(pilot, app)
        assert "sent in part" not in screen_text(app)  # the pane lists it
        await pilot.resize_terminal(80, 24)
        first = cut["helpers.py"][1][0]
        await until(pilot, lambda: f"sent in part: helpers.py lines {first[0]}-{first[1]}"
                    in screen_text(app), "the note once the pane folds")
        await pilot.resize_terminal(200, 50)
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.2)
        assert screen_text(app).count("sent in part") == 1  # said once for the request


async def test_a_draft_shows_what_it_sends_of_a_large_file(repo: Path, sim: SimProcess) -> None:
    """While a prompt is typed, a large chosen file shows the tokens its request would send of
    it (of its whole size) and the lines, not only its size."""
    app = drafting_app(repo, sim)
    async with app.run_test(size=(200, 50)) as pilot:
        chosen = (await drafted(pilot, app))()
        pane = app.main.query_one(FilesPane)
        assert chosen.sends < chosen.tokens  # a part of it goes
        assert any(a <= 4501 <= b for a, b in chosen.regions)  # def helper_1500
        text = screen_text(app)
        from spark_pair.ui.widgets.files import tokens_label

        assert re.search(rf"○ helpers\.py {tokens_label(chosen.sends)} *│", text)  # what goes
        assert "sends lines 1-" in text and f"({tokens_label(chosen.tokens)} whole)" in text
        assert pane.border_subtitle.endswith(f"{tokens_label(chosen.sends)} tok")


async def test_a_chosen_file_changed_on_disk_shows_what_its_new_content_sends(
        repo: Path, sim: SimProcess) -> None:
    """The draft stays as it is and its large chosen file doubles on disk: the row's figures
    follow the file (they once kept those of its first content: what went and its size)."""
    from spark_pair.ui.widgets.files import tokens_label

    app = drafting_app(repo, sim)
    async with app.run_test(size=(200, 50)) as pilot:
        big = await drafted(pilot, app)
        first = big().tokens
        big_module(repo, 6000)
        await until(pilot, lambda: big() is not None and big().tokens > first * 1.8,
                    "the figures of the file as it is now")
        now = big()
        assert any(a <= 4501 <= b for a, b in now.regions)  # def helper_1500, still
        await until(pilot, lambda: f"({tokens_label(now.tokens)} whole)" in screen_text(app),
                    "the new size on screen")
        assert f"({tokens_label(first)} whole)" not in screen_text(app)


def test_a_chosen_file_keeps_what_the_last_request_sent_until_the_draft_s_own_spans() -> None:
    from spark_pair.ui.widgets.files import Chosen, file_rows

    cut = {"pkg/pricing.py": ("named", ((1, 41), (1564, 1647)))}

    def rows(chosen: Chosen) -> str:
        options = file_rows({}, [chosen], set(), set(), {"pkg/pricing.py"}, frozenset(), 60,
                            cut=cut)
        return str(options[0].prompt)

    before = rows(Chosen("pkg/pricing.py", "earlier turn", 11200))
    assert "○ pkg/pricing.py 11.2k" in before
    assert "last sent lines 1-41, 1564-1647 (named)" in before
    after = rows(Chosen("pkg/pricing.py", "earlier turn", 11200, 720, ((1, 41), (1600, 1612))))
    assert "○ pkg/pricing.py 720\n" in after
    assert "sends lines 1-41, 1600-1612 (11.2k whole)" in after and "last sent" not in after
