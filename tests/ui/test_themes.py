"""Themes: the shipped files, a user's folder, bad files reported in one notice, snapshots."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from support.diffstream import frames, reply
from support.uiapps import PaneApp, words_marked

from spark_pair.protocol.events import Completed, Metrics, Started, TextDelta, Usage
from spark_pair.session.events import TurnStarted
from spark_pair.ui.themes import DIFF_VARIABLES, load_theme, load_themes, shipped_dir, user_dir
from spark_pair.ui.widgets.diff_view import HunkMark

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("dark", "light", "high-contrast")


def test_the_shipped_themes_load_and_set_every_diff_colour(tmp_path: Path) -> None:
    themes, problems = load_themes(tmp_path / "none")
    assert problems == []
    assert set(SHIPPED) <= set(themes)
    for name in SHIPPED:
        assert set(DIFF_VARIABLES) <= set(themes[name].variables), name
    assert themes["light"].dark is False and themes["dark"].dark is True
    # the package's folder is the repository's top-level themes/ folder
    assert sorted(p.name for p in shipped_dir().glob("*.toml")) == \
        sorted(p.name for p in (ROOT / "themes").glob("*.toml"))


def test_user_themes_live_under_the_config_dir(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path))
    assert user_dir() == tmp_path / "config" / "themes"
    user_dir().mkdir(parents=True)
    (user_dir() / "mine.toml").write_text('primary = "#ff8800"\ndark = false\n'
                                          '[variables]\ndiff-added = "#00ff00"\n')
    (user_dir() / "dark.toml").write_text('name = "dark"\nprimary = "#123456"\n')
    themes, problems = load_themes()
    assert problems == []
    assert themes["mine"].primary == "#ff8800" and themes["mine"].dark is False
    assert themes["dark"].primary == "#123456"  # the user's file replaces the shipped one


@pytest.mark.parametrize("text, reason", [
    ('primary = "#12345', "not valid TOML"),
    ('primary = "blurple"', "'blurple' is not a colour"),
    ('primary = "#123456"\ncolour = "#000000"', "unknown field 'colour'"),
    ('dark = true', "needs at least a primary colour"),
    ('primary = "#123456"\n[variables]\ndiff-added = 3', "variables.diff-added must be a string"),
    ('primary = "#123456"\n[variables]\ndiff-hunk = "nope"', "variables.diff-hunk = 'nope'"),
    ('primary = "#123456"\ntext_alpha = 7', "text_alpha must be a number from 0 to 1"),
])
def test_a_bad_theme_file_says_what_is_wrong(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=None) as info:
        load_theme(path)
    assert reason in str(info.value)


async def test_bad_files_are_reported_in_one_notice_and_the_default_is_used(
        tmp_path: Path) -> None:
    (tmp_path / "broken.toml").write_text("primary = \n")
    (tmp_path / "pink.toml").write_text('primary = "pink-ish"\n')
    (tmp_path / "fine.toml").write_text('primary = "#336699"\n')
    app = PaneApp("pink", user=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.theme == "dark"
        assert "fine" in app.available_themes and "pink" not in app.available_themes
        assert len(app.notices) == 1
        notice = app.notices[0]
        assert "3 theme files could not be used; using the 'dark' theme" in notice
        assert str(tmp_path / "broken.toml") in notice
        assert str(tmp_path / "pink.toml") in notice and "not a colour" in notice
        assert "no theme named 'pink'" in notice


async def test_a_good_user_theme_is_used_without_a_notice(tmp_path: Path) -> None:
    (tmp_path / "fine.toml").write_text('primary = "#336699"\n')
    app = PaneApp("fine", user=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.theme == "fine" and app.notices == []
        # a theme without diff colours gets them from its own palette
        assert app.theme_variables["diff-added"].startswith("#")


def fill(app: PaneApp) -> None:
    """A mid-stream turn: a multi-file diff with decisions, and the meter's numbers."""
    app.meter.feed([TurnStarted("t", "p", [], 8200, False), Started("r", "ws", "m", "u")],
                   now=10.0)
    for i, (events, partial) in enumerate(frames(reply("17-several-files"),
                                                 random.Random(11))[0]):
        app.view.feed(events, partial)
        app.meter.feed([e for e in events if isinstance(e, TextDelta)], now=10.142 + i / 30)
    app.meter.feed([Usage(8200, 2341), Completed("id", "", Usage(8200, 2341),
                                                 Metrics(0.142, 2.1, 2341, 1184.0))], now=13.0)
    app.view.mark_hunk(0, 0, HunkMark.ACCEPTED)
    app.view.mark_hunk(1, 0, HunkMark.REJECTED)
    app.view.mark_hunk(2, 0, HunkMark.STALE)
    app.view.scroll_to_hunk(1, 0)


@pytest.mark.parametrize("theme", SHIPPED)
def test_snapshot_of_a_diff_in_each_theme(snap_compare, theme: str, tmp_path: Path) -> None:
    app = PaneApp(theme, user=tmp_path / "none", prices={"m": (1.25, 10.0)})

    async def before(pilot) -> None:
        fill(app)
        await words_marked(pilot, app.view)

    assert snap_compare(app, terminal_size=(80, 24), run_before=before)


def test_snapshot_no_color(snap_compare, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = PaneApp("dark", user=tmp_path / "none")

    async def before(pilot) -> None:
        fill(app)
        await words_marked(pilot, app.view)

    assert snap_compare(app, terminal_size=(80, 24), run_before=before)


@pytest.mark.slow
def test_a_built_wheel_holds_the_themes(tmp_path: Path) -> None:
    """A non-editable install gets the themes: build a wheel from the tracked files."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    src = tmp_path / "src-tree"
    for rel in filter(None, files):
        target = src / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        origin = ROOT / rel
        if origin.is_symlink():
            target.symlink_to(origin.readlink())
        elif origin.is_file():
            shutil.copyfile(origin, target)
    # (the build backend is in the test environment: no isolated one is made for it)
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                          "--no-build-isolation", "-w", str(tmp_path / "dist"), str(src)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    wheel = next((tmp_path / "dist").glob("spark_pair-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for name in SHIPPED:
        assert f"spark_pair/themes/{name}.toml" in names


async def test_switching_theme_repaints_the_diff_in_the_new_colours(tmp_path: Path) -> None:
    app = PaneApp("dark", user=tmp_path / "none")
    async with app.run_test(size=(80, 24)) as pilot:
        fill(app)
        await words_marked(pilot, app.view)

        def added_bg() -> str:
            for y in range(app.view.size.height):
                strip = app.view.render_line(y)
                if strip.text.startswith("+A2"):
                    return next(iter(strip)).style.bgcolor.triplet.hex
            raise AssertionError("no +A2 row on screen")

        assert added_bg() == app.available_themes["dark"].variables["diff-added"].lower()
        app.theme = "light"
        await pilot.pause()
        assert added_bg() == app.available_themes["light"].variables["diff-added"].lower()
