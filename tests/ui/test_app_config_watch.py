"""The config files as the app watches them: the repository is opened once when two ask at the
same time (a config file fixed, and /transport auto)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.message_pump import MessagePump

from spark_pair.ui.driver import Driver


async def test_the_repository_is_opened_once_when_two_ask_at_the_same_time(
        tmp_path: Path) -> None:
    """A config file fixed and /transport auto at once: the second open waits for the first
    one's outcome and opens nothing of its own."""
    driver = Driver(tmp_path, target=MessagePump(), choice=None)
    began: list[int] = []

    async def slow_open() -> None:
        began.append(1)
        await asyncio.sleep(0.05)

    driver._open = slow_open  # type: ignore[method-assign]
    await asyncio.gather(driver.open(), driver.open())
    assert began == [1] and not driver.opening
    await driver.open()  # (over: the next call opens again)
    assert began == [1, 1]
