"""What the turn's request sent of a file cut into regions, told where a person looks: the
files pane lists the line spans and why under the file; below 100 columns, where the pane is
folded away (when the request goes, or when the terminal narrows after), a note at the head of
the live diff says it."""

from __future__ import annotations

from collections.abc import Sequence

from ..base.printable import shown
from ..session.events import ContextChosen, Looked, SessionEvent
from .notices import displayed
from .widgets.diff_view import DiffView
from .widgets.files import FilesPane, spans_text


def context_sent(pane: FilesPane, view: DiffView, event: ContextChosen) -> None:
    """The request went with `event.files`: those sent as regions, with their spans and why."""
    cut = {f.path: (f.reason, tuple(f.regions)) for f in event.files
           if f.shown == "regions" and f.regions}
    pane.set_cut(cut)
    if not displayed(pane):
        folded(pane, view)


def folded(pane: FilesPane, view: DiffView) -> None:
    """The pane is folded away: a note at the head of the live diff says what the last
    request sent of each file cut (once for that request)."""
    if not pane.cut or pane.cut_told:
        return
    pane.cut_told = True
    parts = [f"{shown(path)} lines {spans_text(regions)} ({why})"
             for path, (why, regions) in pane.cut.items()]
    view.note("sent in part: " + "; ".join(parts))


def feed(pane: FilesPane, view: DiffView, events: Sequence[SessionEvent],
         partial_line: str | None) -> None:
    """A frame into the live diff, with the note of what was sent where its event stands: the
    look's before the diff it brings, however the frames were cut (a busy loop batches)."""
    done = 0
    for i, event in enumerate(events):
        if type(event) is ContextChosen:
            view.feed(events[done:i])
            context_sent(pane, view, event)
            done = i + 1
        elif type(event) is Looked:
            view.feed(events[done:i])
            looked(pane, view, event)
            done = i + 1
    view.feed(events[done:], partial_line)


def looked(pane: FilesPane, view: DiffView, event: Looked) -> None:
    """The model asked for more before its diff: the live diff says what it asked for and what
    went; the pane lists each file sent with its spans and why ("asked by the model")."""
    from ..session.look import said

    view.note(said(event))
    if event.files:
        pane.set_sent([*pane.sent, *(f.path for f in event.files)])
        pane.set_cut({**pane.cut, **{f.path: (f.reason, tuple(f.regions))
                                     for f in event.files}})
        pane.cut_told = True  # the note above said it
