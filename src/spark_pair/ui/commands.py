"""The slash commands' router and the work of most of them (the table is `slash.SLASH`; the
session commands' work is in `sessions`, /commit's in `commits`), and the context set they
edit."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from ..base.errors import SparkPairError, UsageError
from ..base.printable import shown
from ..base.transport import TRANSPORT_CHOICES
from . import sessions, slash
from .host import Panes
from .notices import displayed
from .review_state import Undone
from .widgets.diff_view import DiffView
from .widgets.files import FilesPane
from .widgets.meter import Meter
from .widgets.prompt import Prompt
from .widgets.review import ReviewPane

if TYPE_CHECKING:
    from .chosen import ChosenFiles
    from .commits import Commits
    from .config_watch import ConfigWatch
    from .driver import Driver


class CommandHost(sessions.SessionHost, Protocol):
    """What the slash commands use of the main screen."""

    driver: Driver
    commits: Commits
    config_watch: ConfigWatch
    chooser: ChosenFiles
    context: dict[str, int | None]

    def prepare(self) -> object: ...

    def toggle_chosen(self, path: str) -> bool: ...

    def action_help(self) -> None: ...

    def confirm_quit(self) -> None: ...


def start(screen: Panes, work: Awaitable[None]) -> None:
    """A command's worker (one at a time: a new command replaces the one running)."""
    screen.run_worker(work, group="command", exclusive=True, exit_on_error=False)


def reopen(screen: CommandHost, overrides: dict[str, str], what: str) -> None:
    start(screen, _reopen(screen, overrides, what))


def run(screen: CommandHost, text: str) -> bool:
    """Run a slash command: `text` is the prompt (the command, then its argument). False: it
    was refused (unknown, its argument missing or one too many, or a turn is in flight), and
    the notice says why."""
    command, _, arg = text.partition(" ")
    arg = arg.strip()
    found = slash.BY_NAME.get(command)
    if found is None or (found.needs_arg and not arg):
        screen.show_error(UsageError(
            f"unknown command {text!r}" if found is None else f"{command} needs an argument",
            hint=slash.hint()))
        return False
    if arg and not found.arg:  # '/undo 3' must not undo the last turn instead
        screen.show_error(UsageError(f"{command} takes no argument",
                                     hint=f"{command}: {found.help}"))
        return False
    if found.waits and screen.turn_worker is not None:
        screen.say(screen.busy(command))
        return False
    return HANDLERS[command](screen, arg) is not False


def _transport(screen: CommandHost, arg: str) -> bool:
    if arg not in TRANSPORT_CHOICES:
        screen.show_error(UsageError(f"unknown transport {arg!r}",
                                     hint=f"use one of: {', '.join(TRANSPORT_CHOICES)}"))
        return False
    reopen(screen, {"session.transport": arg}, f"transport {arg}")
    return True


async def _undo(screen: CommandHost) -> None:
    if screen.turn_worker is not None:
        screen.say(screen.busy("/undo"))
        return
    try:
        undid = await screen.driver.undo()
    except SparkPairError as exc:
        screen.show_error(exc)
        return
    _record_undo(screen.driver, undid.turn_id, True)
    note = await screen.commits.after_undo()
    restored = undid.paths
    screen.say(f"restored {len(restored)} file(s): {', '.join(map(shown, restored))}"
               "; /redo writes them again" + (f"\n{note}" if note else ""))
    await _undone_shown(screen)


async def _redo(screen: CommandHost) -> None:
    if screen.turn_worker is not None:
        screen.say(screen.busy("/redo"))
        return
    try:
        undid = await screen.driver.redo()
    except SparkPairError as exc:
        screen.show_error(exc)
        return
    _record_undo(screen.driver, undid.turn_id, False)
    written = undid.paths
    screen.say(f"re-applied {len(written)} file(s): {', '.join(map(shown, written))}")
    await _undone_shown(screen)


def _record_undo(driver: Driver, turn_id: str, undone: bool) -> None:
    """A turn undone by /undo (or written again by /redo, `undone` False) is kept so: in the
    stored session, in the stats (not an applied turn) and, for a turn of this session, in
    what the next request tells the model."""
    runtime = driver.runtime
    if not turn_id or runtime is None:
        return
    runtime.store.record_undo(turn_id, undone)
    note = driver.stored.undone(turn_id, undone) if driver.stored is not None else ""
    if note:
        runtime.workspace.tell(note)


async def _undone_shown(screen: CommandHost) -> None:
    """After /undo or /redo: the review's rows say whether its turn is on disk now; the
    files pane lists again a context file the undo brought back."""
    screen.prepare()
    review = screen.query_one(ReviewPane)
    turn_id = review.review.turn_id
    if turn_id is not None:
        undone = await screen.driver.undone(turn_id)
        review.set_undone(turn_id, (review.review.undone or Undone.UNDONE) if undone else None)


async def _reopen(screen: CommandHost, overrides: dict[str, str], what: str) -> None:
    if screen.turn_worker is not None:
        screen.say(screen.busy(f"switch to {what}"))
        return
    driver = screen.driver
    if driver.runtime is None and not driver.opening:  # it could not open: it tries again,
        driver.overrides.update(overrides)  # with these settings, saying how it went
        await screen.config_watch.open_again(what, what)
        return
    screen.say(f"switching to {what}…")
    try:
        await driver.reopen(**overrides)
    except SparkPairError as exc:
        screen.show_error(exc)
        return
    if screen.driver.session is not None:
        screen.say(f"now using {what}")


def add_context(screen: CommandHost, arg: str) -> bool:
    from ..edits.paths import clean_rel_path

    try:
        rel = clean_rel_path(arg)
    except SparkPairError as exc:  # (its default hint is about writing)
        hint = "only files inside the repository go into the context (relative to its root)"
        screen.show_error(UsageError(exc.message, hint=hint if exc.hint == exc.default_hint
                                     else exc.hint))
        return False
    if not (screen.launch.root / rel).is_file():
        screen.show_error(UsageError(f"/add {arg}: no such file in the repository",
                                     hint="paths are relative to the repository root"))
        return False
    if rel in screen.context:
        screen.say(f"{shown(rel)} is already in the context")
        return True
    screen.context[rel] = None
    screen.query_one(FilesPane).set_context(screen.context)
    screen.prepare()
    _context_said(screen, f"added {shown(rel)} to the context")
    return True


def drop_context(screen: CommandHost, arg: str) -> bool:
    from ..edits.paths import clean_rel_path

    try:
        rel = clean_rel_path(arg.strip())
    except SparkPairError:
        rel = arg.strip()  # (never in the context)
    if rel not in screen.context:
        if rel in screen.chooser.kept():
            screen.toggle_chosen(rel)
            return True
        screen.say(f"{shown(rel)} is not in the context")
        return False
    del screen.context[rel]
    screen.query_one(FilesPane).set_context(screen.context)
    screen.prepare()
    _context_said(screen, f"dropped {shown(rel)} from the context")
    return True


def _context_said(screen: CommandHost, what: str) -> None:
    """A change of the context set, said where the folded files pane cannot show it."""
    if not displayed(screen.query_one(FilesPane)):
        n = len(screen.context)
        screen.say(f"{what}: {n} file{'' if n == 1 else 's'} in it now")


def clear(screen: CommandHost) -> None:
    if screen.turn_worker is not None:
        screen.say(screen.busy("/clear"))
        return
    screen.query_one(DiffView).reset()
    screen.query_one(Meter).reset()
    screen.query_one(ReviewPane).clear()
    screen.context.clear()
    screen.query_one(FilesPane).set_context(screen.context)
    screen.prepare()
    screen.say("")


def toggled(screen: CommandHost, path: str) -> None:
    """The files pane's toggle: a chosen file is dropped or back, else the context changes."""
    if screen.toggle_chosen(path):
        return
    if path in screen.context:
        drop_context(screen, path)
    else:
        add_context(screen, path)


def pinned(screen: CommandHost, path: str) -> None:
    if path in screen.context:
        screen.say(f"{shown(path)} is already in the context")
    else:
        screen.chooser.dropped.discard(path)
        add_context(screen, path)


def chosen_changed(screen: CommandHost) -> None:
    """The files chosen for the draft (or those dropped) changed: show them, read them
    ahead, and say why a file the draft names is not sent."""
    chosen = screen.chooser.chosen
    screen.query_one(FilesPane).set_chosen(chosen, screen.chooser.dropped)
    screen.query_one(Prompt).files_note = screen.chooser.border_line(screen.context)
    notes = screen.chooser.withheld_notes()
    if notes:
        screen.say("; ".join(notes))
    screen.prepare()


# (the main screen, the argument) -> False: refused (the notice says why; the text stays)
Handler = Callable[[CommandHost, str], object]
HANDLERS: dict[str, Handler] = {
    "/undo": lambda screen, arg: start(screen, _undo(screen)),
    "/redo": lambda screen, arg: start(screen, _redo(screen)),
    "/commit": lambda screen, arg: screen.commits.start(),
    "/model": lambda screen, arg: reopen(screen, {"model.name": arg}, f"model {arg}"),
    "/transport": _transport,
    "/add": add_context,
    "/drop": drop_context,
    "/clear": lambda screen, arg: clear(screen),
    "/sessions": lambda screen, arg: sessions.command(screen, "/sessions", arg),
    "/rename": lambda screen, arg: sessions.command(screen, "/rename", arg),
    "/fork": lambda screen, arg: sessions.command(screen, "/fork", arg),
    "/help": lambda screen, arg: screen.action_help(),
    "/quit": lambda screen, arg: screen.confirm_quit(),  # as ctrl+q: asks when undecided
}
