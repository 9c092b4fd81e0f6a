"""SQLite store for request records and bench runs. Embedded, no server; WAL for safe reads."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base import dirs
from ..base.errors import ConfigError, UsageError
from ..protocol.records import RequestRecord, RequestStatus

if TYPE_CHECKING:  # a run stores no verdicts: that module loads when they are read or kept
    from .forms import Form
    from .rounds import Round
    from .verdicts import Fate, Verdict

SCHEMA_VERSION = 1
_COLUMNS = list(RequestRecord.__match_args__)


class RequestStore:
    """Keeps RequestRecords (a Recorder) and bench runs."""

    def __init__(self, path: Path | None = None, must_exist: bool = False) -> None:
        """Open (or create) the store; with `must_exist`, a missing file is an error."""
        self.path = path or dirs.data_dir() / "requests.sqlite3"
        if must_exist and not self.path.is_file():
            raise UsageError(f"there is no request store at {self.path}",
                             hint="spark-pair writes one when it makes requests; check the "
                                  "path, or leave out --db for the default store")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=5, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._create()
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(
                f"cannot open the request store {self.path}: {exc}",
                hint="check the data dir is writable, or set SPARK_PAIR_HOME",
            ) from exc

    def _create(self) -> None:
        cols = ", ".join(f"{name}" for name in _COLUMNS)
        self._db.executescript(
            f"CREATE TABLE IF NOT EXISTS requests (id INTEGER PRIMARY KEY, {cols});"
            "CREATE INDEX IF NOT EXISTS requests_ts ON requests(ts);"
            "CREATE TABLE IF NOT EXISTS bench_runs (id INTEGER PRIMARY KEY, ts REAL, data TEXT);"
            "CREATE TABLE IF NOT EXISTS verdicts (id INTEGER PRIMARY KEY, ts REAL, turn_id TEXT,"
            " model TEXT, op_index INTEGER, path TEXT, kind TEXT, hunk INTEGER, fate TEXT,"
            " reason TEXT);"
            "CREATE INDEX IF NOT EXISTS verdicts_ts ON verdicts(ts);"
            "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER);")
        from . import forms, rounds

        rounds.create(self._db)
        forms.create(self._db)
        if self._db.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0] == 0:
            self._db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))

    def record(self, rec: RequestRecord) -> None:
        row = [getattr(rec, name) for name in _COLUMNS]
        row[_COLUMNS.index("extra")] = json.dumps(rec.extra or {})
        row[_COLUMNS.index("usage_estimated")] = int(rec.usage_estimated)
        marks = ", ".join("?" for _ in _COLUMNS)
        self._db.execute(f"INSERT INTO requests ({', '.join(_COLUMNS)}) VALUES ({marks})", row)

    def records(self, since: float | None = None, until: float | None = None,
                model: str | None = None) -> list[RequestRecord]:
        where, args = ["1=1"], []
        for clause, value in (("ts >= ?", since), ("ts < ?", until), ("model = ?", model)):
            if value is not None:
                where.append(clause)
                args.append(value)
        query = (f"SELECT {', '.join(_COLUMNS)} FROM requests WHERE {' AND '.join(where)} "
                 "ORDER BY ts, id")
        out = []
        for row in self._db.execute(query, args):
            data = dict(zip(_COLUMNS, row, strict=False))
            data["extra"] = json.loads(data["extra"] or "{}")
            data["usage_estimated"] = bool(data["usage_estimated"])
            data["status"] = RequestStatus(data["status"])
            out.append(RequestRecord(**data))
        return out

    def record_verdicts(self, turn_id: str, model: str, verdicts: Sequence[Verdict],
                        ts: float | None = None) -> None:
        """Keep what a person made of a turn's hunks (one row per hunk or operation)."""
        when = time.time() if ts is None else ts
        rows = [(when, turn_id, model, v.op_index, v.path, str(v.kind), v.hunk, str(v.fate),
                 v.reason) for v in verdicts]
        self._db.execute("BEGIN")
        try:
            self._db.executemany(
                "INSERT INTO verdicts (ts, turn_id, model, op_index, path, kind, hunk, fate,"
                " reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def verdict_rows(self, since: float | None = None) -> list[tuple[str, str, Fate]]:
        """(model, turn id, fate) of every recorded verdict since `since`, oldest first."""
        from .verdicts import Fate

        rows = self._db.execute("SELECT model, turn_id, fate FROM verdicts WHERE ts >= ?"
                                " ORDER BY ts, id", (since or 0.0,))
        out = []
        for model, turn_id, fate in rows:
            try:
                out.append((model, turn_id, Fate(fate)))
            except ValueError:
                continue  # a fate a newer version wrote
        return out

    def record_round(self, rnd: Round) -> None:
        """Keep one round of a task (its model, turn and the check's result)."""
        from . import rounds

        rounds.add(self._db, rnd)

    def round_rows(self, since: float | None = None) -> list[Round]:
        from . import rounds

        return rounds.rows(self._db, since)

    def record_rollback(self, turn_id: str) -> None:
        """A turn applied, then rolled back (its check failed): not an applied turn."""
        from . import rounds

        rounds.add_rollback(self._db, turn_id)

    def rollbacks(self, since: float | None = None) -> set[str]:
        from . import rounds

        return rounds.rollbacks(self._db, since)

    def record_undo(self, turn_id: str, undone: bool = True) -> None:
        """A turn applied, then undone by the user (/undo): not an applied turn; `undone`
        False: written again (/redo), applied once more."""
        from . import rounds

        rounds.add_undo(self._db, turn_id, undone)

    def undos(self, since: float | None = None) -> set[str]:
        from . import rounds

        return rounds.undos(self._db, since)

    def record_form(self, turn_id: str, model: str, form: Form) -> None:
        """Keep how well-formed a reply's diff was (stats: the per-model shares)."""
        from . import forms

        forms.add(self._db, turn_id, model, form)

    def form_rows(self, since: float | None = None) -> list[tuple[str, Form]]:
        from . import forms

        return forms.rows(self._db, since)

    def save_bench_run(self, data: dict[str, Any]) -> int:
        cur = self._db.execute("INSERT INTO bench_runs (ts, data) VALUES (?, ?)",
                               (time.time(), json.dumps(data)))
        return int(cur.lastrowid or 0)

    def bench_runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """The newest runs first."""
        rows = self._db.execute("SELECT id, ts, data FROM bench_runs ORDER BY id DESC LIMIT ?",
                                (limit,))
        return [{"id": i, "ts": ts, **json.loads(data)} for i, ts, data in rows]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> RequestStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
