"""Tasks and their rounds: an instruction, the turns that tried to make its check pass, and
which model wrote each one. The request store keeps them (`create`, `add`, `rows`);
`spark-pair stats` reads them per model (`task_stats`). The store opens while a run's reply
streams: nothing here loads at import beyond what that needs."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Round:
    """One turn of a task: round 0 is the first turn, 1.. the fix rounds."""

    task_id: str
    index: int
    model: str
    turn_id: str | None  # None: nothing was applied (rejected, failed, stopped)
    passed: bool | None  # the check after it; None: it did not run
    escalated: bool = False  # sent to the stronger model
    ts: float = 0.0


SQL_CREATE = (
    "CREATE TABLE IF NOT EXISTS rounds (id INTEGER PRIMARY KEY, ts REAL, task_id TEXT,"
    " round INTEGER, model TEXT, turn_id TEXT, passed INTEGER, escalated INTEGER);"
    "CREATE INDEX IF NOT EXISTS rounds_ts ON rounds(ts);"
    # turns applied, then rolled back after their check failed (stats leaves them out)
    "CREATE TABLE IF NOT EXISTS rollbacks (id INTEGER PRIMARY KEY, ts REAL, turn_id TEXT);"
    # turns applied, then undone by the user (/undo; a /redo takes the row away)
    "CREATE TABLE IF NOT EXISTS undos (id INTEGER PRIMARY KEY, ts REAL, turn_id TEXT);")


def create(db: sqlite3.Connection) -> None:
    db.executescript(SQL_CREATE)


def add(db: sqlite3.Connection, rnd: Round) -> None:
    db.execute("INSERT INTO rounds (ts, task_id, round, model, turn_id, passed, escalated)"
               " VALUES (?, ?, ?, ?, ?, ?, ?)",
               (rnd.ts or time.time(), rnd.task_id, rnd.index, rnd.model, rnd.turn_id,
                None if rnd.passed is None else int(rnd.passed), int(rnd.escalated)))


def add_rollback(db: sqlite3.Connection, turn_id: str) -> None:
    db.execute("INSERT INTO rollbacks (ts, turn_id) VALUES (?, ?)", (time.time(), turn_id))


def rollbacks(db: sqlite3.Connection, since: float | None = None) -> set[str]:
    out = db.execute("SELECT turn_id FROM rollbacks WHERE ts >= ?", (since or 0.0,))
    return {turn_id for (turn_id,) in out}


def add_undo(db: sqlite3.Connection, turn_id: str, undone: bool = True) -> None:
    """A turn was undone (/undo), or written again (/redo, `undone` False: neither undone nor
    rolled back any more)."""
    if undone:
        db.execute("INSERT INTO undos (ts, turn_id) VALUES (?, ?)", (time.time(), turn_id))
    else:
        db.execute("DELETE FROM undos WHERE turn_id = ?", (turn_id,))
        db.execute("DELETE FROM rollbacks WHERE turn_id = ?", (turn_id,))


def undos(db: sqlite3.Connection, since: float | None = None) -> set[str]:
    out = db.execute("SELECT turn_id FROM undos WHERE ts >= ?", (since or 0.0,))
    return {turn_id for (turn_id,) in out}


def rows(db: sqlite3.Connection, since: float | None = None) -> list[Round]:
    out = db.execute("SELECT task_id, round, model, turn_id, passed, escalated, ts FROM rounds"
                     " WHERE ts >= ? ORDER BY ts, id", (since or 0.0,))
    return [Round(t, i, m, turn, None if p is None else bool(p), bool(e), ts)
            for t, i, m, turn, p, e, ts in out]


@dataclass(slots=True)
class TaskStats:
    """Per model that drafted the tasks (wrote round 0): what a user reads to choose the fast or
    the strong model for a kind of task."""

    model: str
    tasks: int = 0
    green: int = 0  # tasks whose check passed in the end
    green_first: int = 0  # tasks whose check passed after the first turn
    escalated: int = 0  # tasks with a round sent to the stronger model
    to_green: tuple[int, ...] = ()  # rounds each green task took (1: the first turn)

    @property
    def median_rounds(self) -> float | None:
        from .stats import percentile  # (the store opens during a run: this loads for stats)

        return percentile(self.to_green, 50)

    def share(self, count: int) -> float:
        return count / self.tasks if self.tasks else 0.0

    def as_dict(self) -> dict[str, object]:
        return {"model": self.model, "tasks": self.tasks, "green": self.green,
                "median_rounds_to_green": self.median_rounds,
                "escalated_share": round(self.share(self.escalated), 4),
                "green_first_share": round(self.share(self.green_first), 4)}


def task_stats(records: Iterable[Round]) -> list[TaskStats]:
    """One TaskStats per drafting model (sorted), from the rounds of every task."""
    tasks: dict[str, list[Round]] = {}
    for rnd in records:
        tasks.setdefault(rnd.task_id, []).append(rnd)
    by: dict[str, TaskStats] = {}
    to_green: dict[str, list[int]] = {}
    for rounds in tasks.values():
        rounds.sort(key=lambda r: r.index)
        first = rounds[0]
        s = by.setdefault(first.model, TaskStats(first.model))
        s.tasks += 1
        s.escalated += any(r.escalated for r in rounds)
        s.green_first += first.index == 0 and bool(first.passed)
        green = _green_at(rounds)
        if green is not None:
            s.green += 1
            to_green.setdefault(first.model, []).append(green + 1)
    for model, counts in to_green.items():
        by[model].to_green = tuple(counts)
    return [by[m] for m in sorted(by)]


def _green_at(rounds: Sequence[Round]) -> int | None:
    for rnd in rounds:
        if rnd.passed:
            return rnd.index
    return None
