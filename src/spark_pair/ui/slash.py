"""The slash commands, in one table: name, argument, help. Completion (the prompt), the help
screen, the palette, the unknown-command hint and the router (`commands.HANDLERS`, held to this
table by a test) all read it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Slash:
    name: str  # "/model"
    arg: str  # what it takes ("NAME", "PATH"), "" for nothing
    help: str
    needs_arg: bool = False  # refused without one; one that takes none is refused with one
    waits: bool = False  # refused while a turn streams or waits for its review

    @property
    def usage(self) -> str:
        return f"{self.name} {self.arg}" if self.arg else self.name


SLASH: tuple[Slash, ...] = (
    Slash("/undo", "", "restore the files of the last applied turn", waits=True),
    Slash("/redo", "", "re-apply exactly what the last /undo restored", waits=True),
    Slash("/commit", "", "commit this session's accepted turns not yet committed (none: those "
                         "applied since the last commit; the message is shown to edit; ctrl+s "
                         "commits); after /undo of a committed turn: record its revert",
          waits=True),
    Slash("/model", "NAME", "talk to another model", needs_arg=True, waits=True),
    Slash("/transport", "NAME", "auto, ws, responses or chat", needs_arg=True, waits=True),
    Slash("/add", "PATH", "put a file into the context", needs_arg=True),
    Slash("/drop", "PATH", "take a file out of the context (or drop one chosen for the prompt)",
          needs_arg=True),
    Slash("/clear", "", "clear the screen and the context set", waits=True),
    Slash("/sessions", "", "the stored sessions of this repository (type to filter): carry one on",
          waits=True),
    Slash("/rename", "NAME", "give this session a name", needs_arg=True),
    Slash("/fork", "", "go on in a copy of this session (the original stays as it was)",
          waits=True),
    Slash("/help", "", "this screen"),
    Slash("/quit", "", "quit"),
)
BY_NAME = {s.name: s for s in SLASH}


def completions() -> tuple[str, ...]:
    """What completion offers: a command that takes an argument ends in a space."""
    return tuple(f"{s.name} " if s.arg else s.name for s in SLASH)


def hint() -> str:
    """The unknown-command hint: every command with its argument."""
    return "commands: " + " ".join(s.usage for s in SLASH)
