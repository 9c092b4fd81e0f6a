"""Stored conversations: each session of a repository, its turns, its context set and model.

    store = SessionStore()                     # sessions.sqlite3 beside the request log
    info = store.create(repo, model="m")       # a short readable name ("brisk-otter")
    store.add_turn(info.id, StoredTurn(...))   # one transaction per finished turn
    store.newest(repo); store.named(repo, "brisk-otter"); store.turns(info.id)

A finished turn is written in one transaction, so a process killed mid-turn loses at most that
turn. A file that is not a database, or one a newer version wrote, is moved aside (named in
`moved`, never deleted) and a fresh store begins. The API key is never stored: a turn holds
the instruction, the reply, the model's name, decisions and check results, nothing else.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base import dirs
from ..base.errors import ConfigError, UsageError
from .names import new_name

SCHEMA_VERSION = 1
FILE_NAME = "sessions.sqlite3"
ROLLED_BACK = "rolled_back"  # a stored turn's status: applied, then rolled back (its check)
UNDONE = "undone"  # a stored turn's status: applied, then undone by the user (/undo)
FIX_ROUND = "After your change the check `"  # how a fix round's instruction starts

@dataclass(slots=True)
class StoredTurn:
    """One finished turn as stored (and as resent within budget)."""

    instruction: str
    reply: str = ""
    model: str = ""
    status: str = ""  # TurnStatus value: applied, rejected, failed, cancelled, ...
    turn_id: str = ""  # the id `undo --turn` knows (applied turns)
    decisions: list[dict[str, Any]] = field(default_factory=list)  # per hunk: fate, reason
    changed: list[str] = field(default_factory=list)
    check: dict[str, Any] | None = None  # the configured check's result, when it ran
    error: str = ""
    input_tokens: int = 0
    ts: float = 0.0
    seq: int = 0


@dataclass(slots=True)
class SessionInfo:
    id: int
    name: str
    repo: str
    created: float
    updated: float
    model: str = ""
    context: list[str] = field(default_factory=list)
    parent: str = ""  # the session this one was forked from
    turns: int = 0
    last_instruction: str = ""
    owner: str = ""  # "host:pid" of the process that has it open, or ""


class SessionStore:
    """The stored sessions (SQLite, WAL; one connection per thread that opens one)."""

    def __init__(self, path: Path | None = None, warn: Any = None) -> None:
        self.path = path or dirs.data_dir() / FILE_NAME
        self.moved: Path | None = None  # where a damaged or newer store was put aside
        self._warn = warn
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = self._open()
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cannot open the session store {self.path}: {exc}",
                              hint="check the data dir is writable, or set SPARK_PAIR_HOME"
                              ) from exc

    # ---- opening ---------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = None
        try:
            db = self._connect()
            found = self._version(db)
            if found is None or found <= SCHEMA_VERSION:
                self._create(db)
                return db
            why, tag = (f"from a newer spark-pair (store version {found}; this one reads "
                        f"{SCHEMA_VERSION})"), "newer"
        except sqlite3.DatabaseError as exc:
            why, tag = f"damaged ({exc})", "damaged"
        if db is not None:
            db.close()
        self.moved = _move_aside(self.path, tag)
        if self._warn is not None:
            self._warn(f"the session store {self.path} is {why}: it was moved to "
                       f"{self.moved} (nothing was deleted) and a new one begun")
        db = self._connect()
        self._create(db)
        return db

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=5, isolation_level=None,
                             check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    @staticmethod
    def _version(db: sqlite3.Connection) -> int | None:
        has = db.execute("SELECT name FROM sqlite_master WHERE name='meta'").fetchone()
        if has is None:
            return None
        row = db.execute("SELECT value FROM meta WHERE key='version'").fetchone()
        return None if row is None else int(row[0])

    @staticmethod
    def _create(db: sqlite3.Connection) -> None:
        db.executescript(
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);"
            "CREATE TABLE IF NOT EXISTS sessions (id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
            " repo TEXT NOT NULL, created REAL, updated REAL, model TEXT, context TEXT,"
            " parent TEXT, owner TEXT, UNIQUE (repo, name));"
            "CREATE INDEX IF NOT EXISTS sessions_repo ON sessions(repo, updated);"
            "CREATE TABLE IF NOT EXISTS turns (session INTEGER NOT NULL, seq INTEGER NOT NULL,"
            " ts REAL, turn_id TEXT, instruction TEXT, reply TEXT, model TEXT, status TEXT,"
            " decisions TEXT, changed TEXT, checked TEXT, error TEXT, input_tokens INTEGER,"
            " PRIMARY KEY (session, seq));")
        db.execute("INSERT OR IGNORE INTO meta VALUES ('version', ?)", (str(SCHEMA_VERSION),))

    # ---- sessions --------------------------------------------------------------------------

    def create(self, repo: Path | str, *, model: str = "", context: list[str] | None = None,
               name: str | None = None, parent: str = "") -> SessionInfo:
        """A new session of `repo`; `name` must be free there (UsageError), else one is made."""
        if name is not None:
            name = _checked(name)
        now = time.time()
        repo_s = str(repo)
        for attempt in range(50):
            chosen = name or new_name(attempt)
            try:
                cur = self._db.execute(
                    "INSERT INTO sessions (name, repo, created, updated, model, context, parent,"
                    " owner) VALUES (?, ?, ?, ?, ?, ?, ?, '')",
                    (chosen, repo_s, now, now, model, json.dumps(context or []), parent))
            except sqlite3.IntegrityError:
                if name is not None:
                    raise _taken(name) from None
                continue
            return SessionInfo(int(cur.lastrowid or 0), chosen, repo_s, now, now, model,
                               list(context or []), parent)
        raise ConfigError("could not find a free session name",
                          hint="name it: --session NAME")  # (50 random tries all taken)

    def listed(self, repo: Path | str | None = None) -> list[SessionInfo]:
        """The sessions (of `repo`, or all), the newest first."""
        where, args = ("WHERE s.repo = ?", [str(repo)]) if repo is not None else ("", [])
        rows = self._db.execute(
            "SELECT s.id, s.name, s.repo, s.created, s.updated, s.model, s.context, s.parent,"
            " s.owner, (SELECT COUNT(*) FROM turns t WHERE t.session = s.id),"
            " (SELECT instruction FROM turns t WHERE t.session = s.id AND"
            " substr(t.instruction, 1, ?) != ? ORDER BY seq DESC LIMIT 1)"  # the person's
            f" FROM sessions s {where} ORDER BY s.updated DESC, s.id DESC",
            [len(FIX_ROUND), FIX_ROUND, *args])
        found = [SessionInfo(i, n, r, c, u, m or "", json.loads(ctx or "[]"), p or "", k,
                             last or "", o or "")
                 for i, n, r, c, u, m, ctx, p, o, k, last in rows]
        # a session without a turn whose process ended without closing it (a terminal
        # closed): never listed, and removed
        left = [s for s in found if not s.turns and s.owner and not owner_alive(s.owner)]
        for s in left:
            with contextlib.suppress(sqlite3.Error):  # (removed by the next listing then)
                self.drop_if_empty(s.id)
        return [s for s in found if all(s.id != g.id for g in left)]

    def newest(self, repo: Path | str) -> SessionInfo | None:
        """The session last used (one with turns, when there is any)."""
        found = self.listed(repo)
        return next((s for s in found if s.turns), found[0] if found else None)

    def drop_if_empty(self, session: int) -> None:
        """Remove a session no turn was stored in (opened and left)."""
        self._db.execute("DELETE FROM sessions WHERE id = ? AND NOT EXISTS"
                         " (SELECT 1 FROM turns WHERE session = ?)", (session, session))

    def named(self, repo: Path | str, name: str) -> SessionInfo | None:
        return next((s for s in self.listed(repo) if s.name == name), None)

    def rename(self, session: int, name: str) -> None:
        name = _checked(name)
        try:
            self._db.execute("UPDATE sessions SET name = ? WHERE id = ?", (name, session))
        except sqlite3.IntegrityError:
            raise _taken(name) from None

    def claim(self, session: int, owner: str | None = None) -> str:
        """Mark `session` open in this process; returns the owner it had when that one is still
        alive (then nothing changes), else ''."""
        me = owner or this_owner()
        self._db.execute("BEGIN IMMEDIATE")
        try:
            row = self._db.execute("SELECT owner FROM sessions WHERE id = ?",
                                   (session,)).fetchone()
            had = (row[0] or "") if row else ""
            if had and had != me and owner_alive(had):
                self._db.execute("COMMIT")
                return had
            self._db.execute("UPDATE sessions SET owner = ? WHERE id = ?", (me, session))
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        return ""

    def release(self, session: int, owner: str | None = None) -> None:
        self._db.execute("UPDATE sessions SET owner = '' WHERE id = ? AND owner = ?",
                         (session, owner or this_owner()))

    # ---- turns -----------------------------------------------------------------------------

    def add_turn(self, session: int, turn: StoredTurn, *, model: str | None = None,
                 context: list[str] | None = None, release: str | None = None) -> int:
        """Store one finished turn (and the session's model and context set) in one
        transaction; returns its sequence number. `release`: the owner lets the session go
        in the same transaction (a run's one turn)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            seq = self._db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM turns WHERE session = ?",
                                   (session,)).fetchone()[0]
            self._insert(session, seq, turn)
            sets, args = ["updated = ?"], list[Any]([turn.ts or time.time()])
            if model:
                sets.append("model = ?")
                args.append(model)
            if context is not None:
                sets.append("context = ?")
                args.append(json.dumps(context))
            self._db.execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?",
                             (*args, session))
            if release is not None:
                self._db.execute("UPDATE sessions SET owner = '' WHERE id = ? AND owner = ?",
                                 (session, release))
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        turn.seq = int(seq)
        return int(seq)

    def _insert(self, session: int, seq: int, t: StoredTurn) -> None:
        self._db.execute(
            "INSERT INTO turns (session, seq, ts, turn_id, instruction, reply, model, status,"
            " decisions, changed, checked, error, input_tokens) VALUES"
            " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (session, seq, t.ts or time.time(), t.turn_id, t.instruction, t.reply, t.model,
             t.status, json.dumps(t.decisions), json.dumps(t.changed),
             json.dumps(t.check) if t.check is not None else None, t.error, t.input_tokens))

    def set_check(self, session: int, turn_id: str, check: dict[str, Any]) -> None:
        """The configured check's result for an applied turn (it runs after the turn)."""
        self._db.execute("UPDATE turns SET checked = ? WHERE session = ? AND turn_id = ?",
                         (json.dumps(check), session, turn_id))

    def set_status(self, session: int, turn_id: str, status: str) -> None:
        """A turn's outcome changed after it was stored (applied, then rolled back or undone,
        or applied again by /redo)."""
        self._db.execute("UPDATE turns SET status = ? WHERE session = ? AND turn_id = ?",
                         (status, session, turn_id))

    def mark_turn(self, turn_id: str, status: str, was: tuple[str, ...]) -> int:
        """A turn's outcome changed, in whichever session holds it (`spark-pair undo` / `redo`
        outside the app): only while its status is one of `was`; returns the rows changed."""
        marks = ", ".join("?" * len(was))
        cur = self._db.execute(f"UPDATE turns SET status = ? WHERE turn_id = ? AND status IN "
                               f"({marks})", (status, turn_id, *was))
        return cur.rowcount

    def turns(self, session: int) -> list[StoredTurn]:
        rows = self._db.execute(
            "SELECT seq, ts, turn_id, instruction, reply, model, status, decisions, changed,"
            " checked, error, input_tokens FROM turns WHERE session = ? ORDER BY seq",
            (session,))
        return [StoredTurn(ins or "", rep or "", m or "", st or "", tid or "",
                           json.loads(dec or "[]"), json.loads(ch or "[]"),
                           json.loads(chk) if chk else None, err or "", tok or 0, ts or 0.0,
                           seq)
                for seq, ts, tid, ins, rep, m, st, dec, ch, chk, err, tok in rows]

    def fork(self, source: SessionInfo, name: str | None = None) -> SessionInfo:
        """A new session holding a copy of `source`'s turns; `source` stays as it is."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            new = self.create(source.repo, model=source.model, context=source.context,
                              name=name, parent=source.name)
            self._db.execute(
                "INSERT INTO turns SELECT ?, seq, ts, turn_id, instruction, reply, model, status,"
                " decisions, changed, checked, error, input_tokens FROM turns WHERE session = ?",
                (new.id, source.id))
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        new.turns = source.turns
        new.last_instruction = source.last_instruction
        return new

    def prune(self, days: float, repo: str | None = None, now: float | None = None
              ) -> list[SessionInfo]:
        """Remove the sessions of `repo` (None: of every repository) not used for `days`
        (never one that is open); returns them."""
        cutoff = (now or time.time()) - days * 86400
        old = [s for s in self.listed(repo) if s.updated < cutoff
               and not (s.owner and owner_alive(s.owner))]
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for s in old:
                self._db.execute("DELETE FROM turns WHERE session = ?", (s.id,))
                self._db.execute("DELETE FROM sessions WHERE id = ?", (s.id,))
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        return old

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _checked(name: str) -> str:
    name = name.strip()
    if not name or len(name) > 64 or any(c.isspace() or not c.isprintable() for c in name):
        raise UsageError(f"{name!r} is not a session name",
                         hint="a name is one word of up to 64 characters, e.g. fix-parser")
    return name


class NameTaken(UsageError):
    """A session of the repository has that name already (`name`)."""

    def __init__(self, name: str, hint: str) -> None:
        super().__init__(f"a session named {name!r} already exists in this repository",
                         hint=hint)
        self.name = name


def _taken(name: str) -> NameTaken:
    return NameTaken(name, "pick another name, or resume that one: --resume " + name)


def _move_aside(path: Path, why: str) -> Path:
    """Rename the store (and its WAL files) to `<name>.<why>-<time>`; never deletes."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.{why}-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.{why}-{stamp}-{n}")
    os.replace(path, target)
    for tail in ("-wal", "-shm"):
        side = path.with_name(path.name + tail)
        if side.exists():
            os.replace(side, target.with_name(target.name + tail))
    return target


def this_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def owner_alive(owner: str) -> bool:
    """Whether the process named by "host:pid" runs (a process of another host counts)."""
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname():
        return True
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def age(ts: float, now: float | None = None) -> str:
    """"3 min", "2 h", "5 d" ago."""
    s = max(0.0, (now or time.time()) - ts)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if s >= size:
            return f"{int(s // size)} {unit}"
    return "now"


def is_fix_round(instruction: str) -> bool:
    """Whether a turn's instruction was a fix round's (the check's output), not the person's."""
    return instruction.startswith(FIX_ROUND)


def row(info: SessionInfo, width: int = 80) -> str:
    """One line of the picker and of `spark-pair sessions`."""
    last = " ".join(info.last_instruction.split())
    head = f"{info.name:<18} {age(info.updated):>6} {info.turns:>3} turn" + (
        "s" if info.turns != 1 else " ")
    room = max(0, width - len(head) - 3)
    if len(last) > room:
        last = last[:max(0, room - 1)] + "…"
    return f"{head}  {last}".rstrip()
