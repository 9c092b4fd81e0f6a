"""The commit message dialog: dismissed before it mounted (a key or a switch right after it was
pushed, as on a busy machine), it leaves the app running instead of failing in its mount."""

from __future__ import annotations

from textual.app import App

from spark_pair.ui.dialogs.message import MessageScreen


async def test_a_message_dialog_dismissed_before_it_mounts_leaves_the_app_running() -> None:
    answers: list[str | None] = []
    app: App[None] = App()
    async with app.run_test() as pilot:
        app.push_screen(MessageScreen("commit", "subject\n\nbody"), answers.append)
        app.pop_screen()
        await pilot.pause(0.2)
        assert app.is_running and not isinstance(app.screen, MessageScreen)
        app.push_screen(MessageScreen("commit", "subject\n\nbody"), answers.append)
        await pilot.pause(0.1)
        await pilot.press("end", "!", "ctrl+s")  # a mounted one still focuses its message
        await pilot.pause(0.1)
    assert answers == ["subject!\n\nbody"]
