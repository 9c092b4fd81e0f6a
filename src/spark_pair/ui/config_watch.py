"""A config file saved or removed while the app runs (the project's .spark-pair.toml or the
user's config.toml, which may be outside the repository the watcher sees): what the app reads
when it uses it ([review], [keys], [prices], [git]) is taken at once; a change to the connection
or the context ([model], [request], [session], [context], [telemetry]) is announced: it takes
effect when spark-pair starts again. A file that no longer loads is said, and the settings in
use stay. The files are watched from the app's start: when the repository could not open (a
file that does not load, no base URL), a config file saved that loads opens it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from textual.notifications import SeverityLevel

from ..base import dirs
from ..base.config import PROJECT_FILE, find_project_file, load_settings
from ..base.errors import ConfigError, SparkPairError, UsageError
from ..base.printable import shown
from . import bindings
from .driver import describe
from .host import Panes, Rooted, Says
from .widgets.meter import Meter
from .widgets.prompt import Prompt

if TYPE_CHECKING:
    from textual.timer import Timer

    from .driver import Driver

POLL_S = 1.0  # how often the files' stat is read (in a thread)
NOW = ("review", "keys", "prices", "git")  # read where they are used: taken at once
LATER = ("model", "request", "session", "context", "telemetry")  # read at start: announced

def again(error: SparkPairError, overrides: Mapping[str, str] | None = None) -> str:
    """What opens an app that could not open: a saved fix of the config; /transport too when
    a transport can mend it (a transport the config names wrong, a server that could not be
    reached), not for a config that does not load for another reason; a restart when the
    value at fault came from the command line (`overrides`), which wins over any config."""
    if "model.base_url" in (overrides or {}) and "base_url" in error.message:
        return ("--base-url on the command line wins over the config: quit (ctrl+q) and start "
                "spark-pair again with it mended, or without it")
    if isinstance(error, ConfigError) and "transport" not in error.message:
        return "save the fixed config and spark-pair opens"
    return "save the fixed config and spark-pair opens (or use /transport auto)"

Stamp = tuple[int, int] | None  # (mtime_ns, size); None: no such file


def stamps(paths: list[Path]) -> dict[Path, Stamp]:
    out: dict[Path, Stamp] = {}
    for path in paths:
        try:
            st = path.stat()
            out[path] = (st.st_mtime_ns, st.st_size)
        except OSError:
            out[path] = None
    return out


class ConfigHost(Panes, Says, Protocol):
    """What the config watch uses of the main screen: its driver, notice, key map, meter."""

    driver: Driver
    open_error: SparkPairError | None  # why the repository could not open (None: it did)

    @property
    def launch(self) -> Rooted: ...

    def set_interval(self, interval: float, callback: Callable[[], object]) -> Timer: ...

    def notify(self, message: str, *, title: str = ..., severity: SeverityLevel = ...,
               timeout: float | None = ..., markup: bool = ...) -> None: ...


def apply_keymap(screen: ConfigHost, keymap: dict[str, str], *, toast: bool = False) -> str:
    """`[keys]` on the app; an id that names no binding, a decision mapped to a key that types
    text, or a key another binding acting with it already has, is said (returned too: '' when
    none) and left at its default. `toast`: said in a toast as well, as the config's other
    warnings are when the app starts (a turn the launch prompt starts clears the notice)."""
    check = bindings.check_keymap(keymap)
    refused = []
    if check.unknown:
        refused.append(UsageError(
            f"[keys] names no binding {', '.join(map(repr, check.unknown))}",
            hint="f1 shows every key with its id (dim, after the action), e.g. "
                 "review.accept, app.stop, files.toggle").describe())
    if check.typed:
        refused.append(UsageError(
            f"[keys] {', '.join(map(repr, check.typed))}: a key that types text never decides",
            hint="use a chord (alt+y, ctrl+y) or a key that is not text (f5, delete)").describe())
    if check.clashes:
        refused.append(UsageError(
            f"[keys] {bindings.clash_text(check.clashes, keymap)}: refused (a key does one "
            "thing); the default key stays",
            hint="pick a key f1 does not list (f5 to f12 are free), or remap the other "
                 "binding too").describe())
    if refused:
        screen.alert("\n".join(refused))
    if refused and toast:
        screen.notify("\n".join(refused), title="config", severity="warning", timeout=8,
                      markup=False)
    screen.app.set_keymap(check.accepted)
    return "\n".join(refused)


class ConfigWatch:
    def __init__(self, screen: ConfigHost) -> None:
        """`screen`: the main screen (its driver, notice, key map, meter)."""
        self.screen = screen
        self.seen: dict[Path, Stamp] | None = None
        self.busy = False
        self.started = False

    def start(self) -> None:
        """From the app's start on, a saved config file is noticed (read once the repository is
        open, or once it could not open)."""
        if not self.started:
            self.started = True
            self.screen.set_interval(POLL_S, self.poll)

    async def look(self) -> None:
        """The files as the repository opens (before it reads them): a change from then on is
        read once the opening is over, whatever its outcome."""
        self.seen = await asyncio.to_thread(lambda: stamps(self.paths()))

    def paths(self) -> list[Path]:
        root = self.screen.launch.root
        return [dirs.user_config_file(), find_project_file(root) or root / PROJECT_FILE]

    def waiting(self) -> bool:
        """The repository is opening (or has not begun to): a change waits for its outcome."""
        driver = self.screen.driver
        return driver.runtime is None and (self.screen.open_error is None or driver.opening)

    async def poll(self) -> None:
        if self.busy or self.waiting():
            return
        self.busy = True
        try:
            now = await asyncio.to_thread(lambda: stamps(self.paths()))  # (paths() looks on disk)
            before, self.seen = self.seen, now
            if before is not None and now != before:  # (a file no longer found is removed)
                changed = {p: now.get(p) for p in {**before, **now} if now.get(p) != before.get(p)}
                if changed:
                    await self.reload(changed)
        finally:
            self.busy = False

    def not_open(self) -> None:
        """Why a turn cannot start now: the repository is opening, or it could not open (the
        error in force, and what opens it); a config file saved since is read at once."""
        screen = self.screen
        if screen.open_error is None:
            screen.say("not ready yet: the repository is still opening")
            return
        screen.alert(f"{describe(screen.open_error)}\n  "
                     f"{again(screen.open_error, screen.driver.overrides)}")
        screen.run_worker(self.poll(), group="config", exit_on_error=False)

    async def open_again(self, head: str, brief: str) -> None:
        """The repository could not open: now that a config file changed, it opens (as
        /transport auto would) if the settings load; if not, their error is the one in force.
        `brief`: `head` without the paths (said before an error, which names its file)."""
        screen, driver = self.screen, self.screen.driver
        try:
            await asyncio.to_thread(load_settings, driver.root, driver.env,
                                    dict(driver.overrides))
        except SparkPairError as exc:
            screen.open_error = exc  # (what enter says from now on)
            screen.alert(f"{brief}, still not open: {describe(exc)}\n  "
                         f"{again(exc, driver.overrides)}")
            return
        screen.say(f"{head}: the config loads; opening…")
        await driver.open()  # (an error is said as at the start: the screen's OpenFailed)
        runtime = driver.runtime
        if runtime is not None:
            typed = "; enter sends the prompt" if screen.query_one(Prompt).text.strip() else ""
            screen.say(f"{head}: spark-pair is open now ({runtime.client.model}){typed}")

    async def reload(self, changed: dict[Path, Stamp]) -> None:
        """`changed`: the files changed, each with its stamp now (None: removed)."""
        screen = self.screen
        saved = ", ".join(shown(str(p)) for p, stamp in changed.items() if stamp is not None)
        gone = ", ".join(shown(str(p)) for p, stamp in changed.items() if stamp is None)
        done = [(word, paths) for word, paths in (("saved", saved), ("removed", gone)) if paths]
        head = "config " + " and ".join(f"{word} ({paths})" for word, paths in done)
        runtime = screen.driver.runtime
        if runtime is None:
            await self.open_again(head, "config " + " and ".join(word for word, _ in done))
            return
        lookup = runtime.lookup
        if lookup is None:  # (an open runtime has its lookup)
            return
        try:
            new = await asyncio.to_thread(load_settings, lookup.cwd, lookup.env,
                                          dict(lookup.overrides))
        except SparkPairError as exc:
            screen.alert(f"{head}, and the config does not load: {exc.message}; the settings "
                         "in use stay (fix the file and save it again)")
            return
        old = runtime.settings
        taken, refused = [], ""
        if new.review != old.review:
            old.review = new.review
            taken.append("[review]")
        if new.keys != old.keys:
            old.keys = new.keys
            refused = apply_keymap(screen, new.keys)
            taken.append("[keys]")
        if new.prices != old.prices:
            old.prices = new.prices
            screen.query_one(Meter).prices = dict(new.prices)
            taken.append("[prices]")
        if new.git != old.git:  # the commit step reads the settings in use
            old.git = new.git
            taken.append("[git]")
        later = [f"[{s}]" for s in LATER if getattr(new, s) != getattr(old, s)]
        for warning in new.warnings:
            if warning not in old.warnings:
                screen.notify(warning, title="config", severity="warning", timeout=8,
                              markup=False)
        if gone:  # where the settings come from now (env and flags still win over them)
            layers = " and ".join([*(shown(str(p)) for p in new.files), "the defaults"])
            said = [f"{layers} are in use now" + (f" for {', '.join(taken)}" if taken else "")]
        else:
            said = [f"now in use: {', '.join(taken)}"] if taken else []
        if later:
            said.append(f"{', '.join(later)} take effect when spark-pair starts again")
        text = f"{head}: " + ("; ".join(said) or "nothing in effect changed")
        if refused:  # (the refusal stays on screen, under the line)
            screen.alert(f"{text}\n{refused}")
        else:
            screen.say(text)
