"""Stored sessions in the app: which one it opens (`-c`, `--resume [NAME]`), the picker
(`--resume` with no name, `/sessions`), `/rename`, `/fork`, and the earlier turns' lines.

`AppStoredSession` belongs to the driver: it opens the stored session before the runtime (so the
session's model is restored), attaches it to the runtime's session once that is open, and
does the store's work in threads (never on the event loop).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from ..base.errors import SparkPairError, UsageError
from ..session.pick import Pick
from ..store.sessions import ROLLED_BACK, UNDONE, is_fix_round
from .host import ScreenParts
from .typed import typed_text

if TYPE_CHECKING:  # the store and its modules load in a worker thread, not with the app
    from ..session.runtime import Runtime
    from ..session.stored import StoredSession
    from ..store.sessions import SessionInfo, StoredTurn


@dataclass(frozen=True, slots=True)
class Choice:
    """What the app was asked to open: a new session (the default), the newest, a named one,
    or the picker first (`picker`)."""

    pick: Pick = Pick()
    picker: bool = False


class AppStoredSession:
    """The stored session of the app's runtime."""

    def __init__(self, root: Path, choice: Choice, warn: Callable[[str], None],
                 pinned: Callable[[], list[str]] | None = None) -> None:
        self.root = root
        self.choice = choice
        self.warn = warn
        self.pinned = pinned  # the context set a person keeps (not the files chosen for one)
        self.current: StoredSession | None = None

    async def open(self, overrides: dict[str, str]) -> None:
        """Open the chosen session (a thread); its model goes into `overrides` unless one is
        given. A session open in another spark-pair, a name not found, nothing to continue:
        said, and a new one begins (nothing is lost). Raises ConfigError (no store)."""
        from ..session.stored import StoredSession

        pick = self.choice.pick
        model = overrides.get("model.name", "")
        try:
            stored = await asyncio.to_thread(StoredSession.open, self.root, pick, model=model,
                                             warn=self.warn)
        except UsageError as exc:  # in use elsewhere, no such name, nothing to continue
            stored = await asyncio.to_thread(StoredSession.open, self.root, Pick(), model=model,
                                             warn=self.warn)
            self.warn(f"{exc.message}; this is a new session, {stored.info.name} (/sessions "
                      "lists them)")
        self.current = stored
        if stored.info.model and "model.name" not in overrides:
            overrides["model.name"] = stored.info.model

    def attach(self, rt: Runtime) -> None:
        if self.current is not None:
            s = rt.settings.session
            self.current.pinned = self.pinned
            self.current.attach(rt.session, rt.workspace, max_turns=int(s.history_turns),
                                budget_tokens=int(s.history_tokens))

    async def switch(self, name: str, rt: Runtime) -> StoredSession:
        """Carry on the session `name` instead (its turns resent from the next request)."""
        from ..session.stored import StoredSession

        old = self.current
        stored = await asyncio.to_thread(StoredSession.open, self.root, Pick(name=name),
                                         warn=self.warn)
        self.current = stored
        self.attach(rt)
        rt.client.reset_chain()  # the server's chain is the other conversation's
        if old is not None:
            await asyncio.to_thread(old.close)
        return stored

    async def fork(self, rt: Runtime) -> StoredSession:
        """A new session from this one's turns; the original stays as it is."""
        old = self.current
        if old is None:
            raise UsageError("no session is open yet", hint="wait for the repository to open")
        new = await asyncio.wrap_future(old.fork())
        new.history = old.history  # the same conversation goes on, kept under the new name
        rt.session.keep = new.keep
        self.current = new
        await asyncio.to_thread(old.close)
        return new

    async def rename(self, name: str) -> str:
        if self.current is None:
            raise UsageError("no session is open yet", hint="wait for the repository to open")
        await asyncio.wrap_future(self.current.rename(name))
        return self.current.info.name

    async def listing(self) -> list[SessionInfo]:
        if self.current is not None:
            return await asyncio.wrap_future(self.current.listing())
        return await asyncio.to_thread(_list, self.root)

    async def instructions(self, found: list[SessionInfo]) -> dict[int, str]:
        """Every instruction the person gave in each of `found` (the picker's filter reads
        them all, not the last alone); fix rounds' output left out."""
        current = self.current
        path = current.store.path if current is not None else None
        words = await asyncio.to_thread(_instructions, path, [s.id for s in found])
        if current is not None:  # (its last turns may not be stored yet)
            words[current.info.id] = _joined(current.turns)
        return words

    def checked(self, turn_id: str, command: str, ok: bool, tail: str) -> None:
        if self.current is not None:
            self.current.checked(turn_id, command, ok, tail)

    def rolled_back(self, turn_id: str) -> str:
        """The turn was rolled back; returns what the model is told of it ("" when unknown)."""
        return "" if self.current is None else self.current.rolled_back(turn_id)

    def undone(self, turn_id: str, undone: bool = True) -> str:
        """The turn was undone by /undo (or written again by /redo, `undone` False); returns
        what the model is told of it ("" when it is not one of this session's turns)."""
        return "" if self.current is None else self.current.undone(turn_id, undone)

    async def close(self) -> None:
        stored, self.current = self.current, None
        if stored is not None:
            await asyncio.to_thread(stored.close)


def _list(root: Path) -> list[SessionInfo]:
    from ..store.sessions import SessionStore

    with SessionStore() as store:
        return store.listed(str(root))


def _instructions(path: Path | None, ids: list[int]) -> dict[int, str]:
    from ..store.sessions import SessionStore

    try:
        with SessionStore(path) as store:
            return {i: _joined(store.turns(i)) for i in ids}
    except (SparkPairError, sqlite3.Error):  # the filter reads the last instructions then
        return {}


def _joined(turns: list[StoredTurn]) -> str:
    return " ".join(t.instruction for t in turns if not is_fix_round(t.instruction))


def earlier_lines(turns: list[StoredTurn], name: str, model: str) -> list[str]:
    """The earlier turns, one line each (collapsed), for the diff view."""
    lines = [f"session {name}: {len(turns)} earlier turn{'s' if len(turns) != 1 else ''}"
             + (f" · model {model}" if model else "")]
    for i, t in enumerate(turns, 1):
        what = {"applied": "applied " + ", ".join(t.changed[:3]), "dry_run": "not applied",
                "rejected": "rejected", "failed": "failed", "cancelled": "stopped",
                "refused": "refused", "conflict": "did not apply",
                ROLLED_BACK: "rolled back " + ", ".join(t.changed[:3]),
                UNDONE: "undone " + ", ".join(t.changed[:3]),
                "no_changes": "no change"}.get(t.status, t.status)
        unfit = sum(d.get("fate") == "unfit" for d in t.decisions)
        if unfit and t.status in ("rejected", "conflict"):  # the tool's refusal, not a person's
            what = ("could not apply" if t.status == "conflict" else
                    f"{unfit} could not apply, the rest rejected")
        text = " ".join(t.instruction.split())
        if is_fix_round(t.instruction):  # not the person's words: the check's output
            text = "fix round: the check's output went back to the model"
        lines.append(f"  ▸ {i}. {text[:60] + ('…' if len(text) > 60 else '')} → {what}")
    return lines


class SessionsScreen(ModalScreen[str | None]):
    """The sessions of the repository, newest first: what is typed filters them (by name or any
    of their instructions, shown above the list), enter picks one (with none shown it says so),
    escape clears the filter, then keeps on."""

    BINDINGS = [Binding("escape", "escape", "cancel", show=False)]

    DEFAULT_CSS = """
    SessionsScreen {
        align: center middle;
    }
    SessionsScreen > Vertical {
        width: 90%;
        height: auto;
        max-height: 80%;
        border: thick $accent;
        background: $surface;
        padding: 0 1;
    }
    SessionsScreen OptionList {
        height: auto;
        max-height: 16;
    }
    SessionsScreen #sessions-filter {
        width: 100%;
        color: $text-muted;
    }
    """

    def __init__(self, sessions: list[SessionInfo], current: str = "",
                 instructions: dict[int, str] | None = None) -> None:
        super().__init__()
        self.sessions = sessions
        self.current = current
        self.instructions = instructions or {}  # session id -> every instruction of it
        self.filter = ""  # what was typed here: the sessions shown hold every word of it

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("sessions here: name, age, turns, last instruction")
            yield Label("", id="sessions-filter", markup=False)  # typed text: literal
            yield OptionList(*self._options())
            yield Label("[b]enter[/b] carry it on   [b]escape[/b] keep on here   "
                        "[b]letters[/b] filter")

    def on_mount(self) -> None:
        self._show_filter()
        self.query_one(OptionList).focus()

    def matching(self) -> list[SessionInfo]:
        words = self.filter.lower().split()
        return [s for s in self.sessions
                if all(w in f"{s.name} {self.instructions.get(s.id, s.last_instruction)}"
                       .lower() for w in words)]

    def _options(self) -> list[Option]:
        from ..store.sessions import row

        return [Option(Text(("▸ " if s.name == self.current else "  ")
                            + row(s, self.app.size.width - 16), no_wrap=True,
                            overflow="ellipsis"), id=s.name) for s in self.matching()]

    def _show_filter(self) -> None:
        label = self.query_one("#sessions-filter", Label)
        if not self.filter:
            label.update("type to filter by name or any instruction")
            return
        n = len(self.matching())
        label.update(f"filter: {self.filter}▏  {n} of {len(self.sessions)} "
                     "(backspace deletes, escape clears)" if n else
                     f"filter: {self.filter}▏  no session matches (backspace deletes, escape "
                     "clears)")

    def _refilter(self, text: str) -> None:
        self.filter = text
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(self._options())
        options.highlighted = 0 if options.option_count else None
        self._show_filter()

    def on_key(self, event: events.Key) -> None:
        """Letters (and space) filter; backspace takes the last one back."""
        text = typed_text(event)
        if event.key == "enter" and not self.matching():
            self.notify(f"no session matches {self.filter!r}: backspace deletes, escape clears "
                        "the filter", severity="warning", timeout=4, markup=False)
        elif event.key == "backspace" and self.filter:
            self._refilter(self.filter[:-1])
        elif text and text != "\n":
            self._refilter(self.filter + text)
        else:
            return
        event.stop()
        event.prevent_default()

    def on_paste(self, event: events.Paste) -> None:
        event.stop()
        self._refilter(self.filter + " ".join(event.text.split()))  # one line of words

    def action_escape(self) -> None:
        if self.filter:
            self._refilter("")
        else:
            self.dismiss(None)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)


# ---- the main screen's side (these take the MainScreen) ------------------------------------

COMMANDS = ("/sessions", "/rename", "/fork")  # (their rows are in slash.SLASH)


def _not_open() -> UsageError:
    return UsageError("the repository is not open", hint="fix the error shown, then try again")


class Stored(Protocol):
    """What the session commands use of the driver (ui.driver.Driver, which imports this
    module)."""

    @property
    def stored(self) -> AppStoredSession | None: ...

    @property
    def runtime(self) -> Runtime | None: ...

    @property
    def opened(self) -> Runtime: ...

    async def reopen(self, **overrides: str) -> None: ...


class SessionHost(ScreenParts, Protocol):
    """What the session commands use of the main screen."""

    @property
    def driver(self) -> Stored: ...


def command(screen: SessionHost, name: str, arg: str) -> bool:
    """Run a session command (/sessions, /rename NAME, /fork); False for another command."""
    if name not in COMMANDS:
        return False
    app_stored = screen.driver.stored
    if app_stored is None:
        screen.show_error(UsageError("this session is not stored",
                                     hint="the warning at start-up said why (the data dir)"))
    elif name == "/rename" and not arg:
        screen.show_error(UsageError("/rename needs a name", hint="/rename fix-parser"))
    elif name == "/rename":
        screen.run_worker(_rename(screen, app_stored, arg), group="command", exclusive=True,
                          exit_on_error=False)
    elif screen.turn_worker is not None:
        screen.say(screen.busy(name))
    elif name == "/fork":
        screen.run_worker(_fork(screen, app_stored), group="command", exclusive=True,
                          exit_on_error=False)
    else:
        screen.run_worker(_pick(screen, app_stored), group="command", exclusive=True,
                          exit_on_error=False)
    return True


async def pick_first(screen: SessionHost) -> None:
    """`--resume` without a name: the picker before the repository opens (escape, or no
    session yet: a new one)."""
    app_stored = screen.driver.stored
    if app_stored is None or not app_stored.choice.picker:
        return
    try:
        found = await app_stored.listing()
    except SparkPairError as exc:
        screen.show_error(exc)
        found = []
    chosen = await screen.app.push_screen_wait(SessionsScreen(
        found, instructions=await app_stored.instructions(found))) if found else None
    if not found:
        screen.say("no earlier session in this repository: this is a new one")
    app_stored.choice = Choice(Pick(name=chosen) if chosen else Pick())


def opened(screen: SessionHost, name: str, turns: list[StoredTurn], model: str) -> None:
    """A session carried on: its earlier turns, one line each, in the diff view."""
    if not turns:
        return
    from ..session.history import carrying_on
    from .widgets.diff_view import DiffView

    view = screen.query_one(DiffView)
    view.reset()
    view.show_lines(earlier_lines(turns, name, model))
    app_stored = screen.driver.stored
    stored = app_stored.current if app_stored is not None else None
    going = stored.going if stored is not None else len(turns)
    screen.say(carrying_on(name, len(turns), going))


async def _rename(screen: SessionHost, app_stored: AppStoredSession, name: str) -> None:
    try:
        now = await app_stored.rename(name)
    except SparkPairError as exc:
        from ..store.sessions import NameTaken

        if isinstance(exc, NameTaken):  # (its hint is the command line's)
            exc = NameTaken(exc.name, "pick another name, or /sessions picks that one")
        screen.show_error(exc)
        return
    screen.say(f"this session is now called {now}")


async def _fork(screen: SessionHost, app_stored: AppStoredSession) -> None:
    old = app_stored.current.info.name if app_stored.current is not None else ""
    runtime = screen.driver.runtime
    if runtime is None:  # (nothing is forked: the new session would have no runtime)
        screen.show_error(_not_open())
        return
    try:
        new = await app_stored.fork(runtime)
    except SparkPairError as exc:
        screen.show_error(exc)
        return
    screen.say(f"forked: this is session {new.info.name} now; {old} stays as it was "
               "(/sessions goes back to it)")


async def _pick(screen: SessionHost, app_stored: AppStoredSession) -> None:
    driver = screen.driver
    try:
        found = await app_stored.listing()
    except SparkPairError as exc:
        screen.show_error(exc)
        return
    current = app_stored.current.info.name if app_stored.current is not None else ""
    chosen = await screen.app.push_screen_wait(SessionsScreen(
        found, current, await app_stored.instructions(found)))
    if not chosen or chosen == current:
        return
    if driver.runtime is None:
        screen.show_error(_not_open())
        return
    try:
        stored = await app_stored.switch(chosen, driver.runtime)
        model = stored.info.model
        if model and model != driver.opened.client.model:
            await driver.reopen(**{"model.name": model})
    except SparkPairError as exc:
        screen.show_error(exc)
        return
    opened(screen, stored.info.name, list(stored.turns), stored.info.model)
