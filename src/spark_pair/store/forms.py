"""How well-formed each model's diffs are: of the replies with a diff, the share that applied
as sent, after a tolerance of the edits engine, after a repair round, or not at all.

One row per reply (turn) in the request store's `forms` table (`create`, `add`, `rows`);
`spark-pair stats` reads them per model (`form_shares`). A store written before the table
existed gains it, empty, when it is opened; an older spark-pair never reads it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a turn classifies its reply without loading SQLite
    import sqlite3


class Form(StrEnum):
    AS_SENT = "as_sent"  # every hunk fitted the file exactly as written
    TOLERANCE = "tolerance"  # it fitted, some hunk only loosely (the engine's tolerances)
    REPAIRED = "repaired"  # some hunk fitted only after the repair round
    REFUSED = "refused"  # some hunk (or operation) could not be applied


def form_of(*, fits: bool, placed_loosely: bool, repaired: bool) -> Form:
    """A reply's form from three facts: whether all of it fits the files now, whether the
    engine placed any hunk loosely (edits' placement), whether a repair round was needed."""
    if not fits:
        return Form.REFUSED
    if repaired:
        return Form.REPAIRED
    return Form.TOLERANCE if placed_loosely else Form.AS_SENT


SQL_CREATE = (
    "CREATE TABLE IF NOT EXISTS forms (id INTEGER PRIMARY KEY, ts REAL, turn_id TEXT,"
    " model TEXT, form TEXT);"
    "CREATE INDEX IF NOT EXISTS forms_ts ON forms(ts);")


def create(db: sqlite3.Connection) -> None:
    db.executescript(SQL_CREATE)


def add(db: sqlite3.Connection, turn_id: str, model: str, form: Form,
        ts: float | None = None) -> None:
    db.execute("INSERT INTO forms (ts, turn_id, model, form) VALUES (?, ?, ?, ?)",
               (time.time() if ts is None else ts, turn_id, model, str(form)))


def rows(db: sqlite3.Connection, since: float | None = None) -> list[tuple[str, Form]]:
    """(model, form) of every reply since `since`, oldest first (a form a newer version wrote
    is left out)."""
    out = []
    for model, form in db.execute("SELECT model, form FROM forms WHERE ts >= ? ORDER BY ts, id",
                                  (since or 0.0,)):
        try:
            out.append((model, Form(form)))
        except ValueError:
            continue
    return out


@dataclass(slots=True)
class FormShares:
    """One model's replies with a diff, by form."""

    model: str
    counts: dict[Form, int] = field(default_factory=lambda: dict.fromkeys(Form, 0))

    @property
    def replies(self) -> int:
        return sum(self.counts.values())

    def share(self, form: Form) -> float:
        return self.counts[form] / self.replies if self.replies else 0.0

    def as_dict(self) -> dict[str, object]:
        return {"model": self.model, "replies": self.replies,
                **{str(f): self.counts[f] for f in Form},
                **{f"{f}_share": round(self.share(f), 4) for f in Form}}


def form_shares(rows: Iterable[tuple[str, Form]]) -> list[FormShares]:
    """Per model (sorted by name)."""
    by: dict[str, FormShares] = {}
    for model, form in rows:
        by.setdefault(model, FormShares(model)).counts[form] += 1
    return [by[m] for m in sorted(by)]
