"""The repository's index: every listed file with its size, definitions and words (SQLite).

    index = RepoIndex(root, cache_file(root, data_dir()))
    index.refresh()                     # blocking (a thread): list, stat, read what changed
    index.update({"src/a.py"})          # the watcher saw these change
    index.defining(["parse_header"])    # -> [("http/utils.py", Definition(...)), ...]

The first `refresh` reads every source file (seconds for a large repository: run it in the
background); later ones read only the files whose size or modification time changed, and the
cache file (one SQLite file per repository in the data folder) carries the index from one
process to the next (with the recent history of the last HEAD, see `gitlog.py`). It is only
a cache: one that cannot be opened or read is replaced, and without a folder to keep it in the
index lives in memory.

Files git ignores are never listed. A link that leaves the repository, a binary file and a file
over `MAX_INDEX_BYTES` are listed with a note saying why they are never sent on their own.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..edits.paths import looks_binary
from .files import ALWAYS_IGNORED, list_files, listed_names
from .symbols import SOURCE_SUFFIXES, Definition, definitions
from .wordcount import words_of

MAX_INDEX_BYTES = 512_000  # larger files are listed, not read for definitions
MAX_FILES = 100_000  # files listed, at most
SCHEMA = 2
_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER,
                                  note TEXT);
CREATE TABLE IF NOT EXISTS defs (path TEXT, name TEXT, lname TEXT, kind TEXT, line INTEGER,
                                 top INTEGER);
CREATE INDEX IF NOT EXISTS defs_lname ON defs(lname);
CREATE INDEX IF NOT EXISTS defs_path ON defs(path);
CREATE TABLE IF NOT EXISTS history (head TEXT PRIMARY KEY, log TEXT);
CREATE TABLE IF NOT EXISTS paths (id INTEGER PRIMARY KEY, path TEXT UNIQUE);
CREATE TABLE IF NOT EXISTS words (word TEXT, id INTEGER, n INTEGER, PRIMARY KEY (word, id))
    WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS words_id ON words(id);
"""


class FileInfo:
    """One listed file as the index knows it."""

    __slots__ = ("path", "size", "note")

    def __init__(self, path: str, size: int, note: str) -> None:
        self.path = path
        self.size = size
        self.note = note  # why it is never sent on its own ('' when it may be)


class RepoIndex:
    """Files and definitions of one repository, kept current by `refresh` and `update`.
    Thread-safe (one lock around the database); every method blocks: call it in a thread."""

    def __init__(self, root: Path, cache: Path | None = None) -> None:
        self.root = Path(root).resolve()
        self.cache = cache
        self.ready = False  # a refresh has run
        self.last_refresh_s = 0.0
        self.read_count = 0  # files read by the last refresh or update
        self._lock = threading.Lock()
        self._files: dict[str, FileInfo] = {}
        self._db = self._open()

    # --- reading ---------------------------------------------------------------------------
    @property
    def files(self) -> dict[str, FileInfo]:
        """Every listed file (a snapshot: replaced, never changed in place)."""
        return self._files

    def defining(self, names: Iterable[str], *, any_case: bool = False
                 ) -> list[tuple[str, Definition]]:
        """(path, definition) of every definition of one of `names` (`any_case`: compared
        without case)."""
        wanted = sorted({n.lower() for n in names} if any_case else set(names))
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        column = "lname" if any_case else "name"
        with self._lock:
            rows = self._db.execute(
                f"SELECT path, name, kind, line, top FROM defs WHERE {column} IN ({marks})",
                wanted).fetchall()
        return [(p, Definition(n, k, ln, bool(t))) for p, n, k, ln, t in rows]

    def containing(self, words: Sequence[str]) -> list[tuple[str, Definition]]:
        """(path, definition) of every definition whose name holds one of `words` (lower
        case), e.g. `pager` in `_pipepager` and `echo_via_pager`."""
        if not words:
            return []
        where = " OR ".join("instr(lname, ?) > 0" for _ in words)
        with self._lock:
            rows = self._db.execute(
                f"SELECT path, name, kind, line, top FROM defs WHERE {where}",
                [w.lower() for w in words]).fetchall()
        return [(p, Definition(n, k, ln, bool(t))) for p, n, k, ln, t in rows]

    def definitions_of(self, paths: Sequence[str], *, top_only: bool = True
                       ) -> dict[str, list[Definition]]:
        """The definitions of each of `paths`, in file order."""
        out: dict[str, list[Definition]] = {p: [] for p in paths}
        if not paths:
            return out
        top = " AND top = 1" if top_only else ""
        with self._lock:
            for i in range(0, len(paths), 500):
                chunk = list(paths[i:i + 500])
                marks = ",".join("?" * len(chunk))
                for p, n, k, ln, t in self._db.execute(
                        f"SELECT path, name, kind, line, top FROM defs WHERE path IN ({marks})"
                        f"{top} ORDER BY path, line", chunk):
                    out[p].append(Definition(n, k, ln, bool(t)))
        return out

    def word_counts(self, words: Iterable[str]) -> list[tuple[str, str, int]]:
        """(path, word, times) for each file whose text holds one of `words` (lower case; the
        words of identifiers, comments and strings alike, see `wordcount.words_of`)."""
        wanted = sorted(set(words))
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        with self._lock:
            return self._db.execute(
                f"SELECT p.path, w.word, w.n FROM words w JOIN paths p ON p.id = w.id "
                f"WHERE w.word IN ({marks})", wanted).fetchall()

    def commit_log(self, head: str) -> str | None:
        """The git log kept for commit `head` (see `gitlog.recent_commits`), or None."""
        with self._lock:
            row = self._db.execute("SELECT log FROM history WHERE head = ?", (head,)).fetchone()
        return None if row is None else row[0]

    # --- writing ---------------------------------------------------------------------------
    def keep_commit_log(self, head: str, log: str) -> None:
        """Keep the git log of commit `head` (only the last one is kept)."""
        with self._lock:
            try:
                self._db.execute("BEGIN")
                self._db.execute("DELETE FROM history")
                self._db.execute("INSERT INTO history VALUES (?, ?)", (head, log))
                self._db.execute("COMMIT")
            except sqlite3.Error:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")

    def refresh(self) -> None:
        """List the repository's files again and read the new or changed ones."""
        started = time.perf_counter()
        names = listed_names(self.root)
        if names is None:
            names = list_files(self.root)
        with self._lock:
            known = {p: (m, s) for p, m, s in self._db.execute(
                "SELECT path, mtime_ns, size FROM files")}
            self._store(names[:MAX_FILES], known, drop_missing=True)
        self.ready = True
        self.last_refresh_s = time.perf_counter() - started

    def update(self, rels: Iterable[str]) -> None:
        """Read these files again (changed, created or deleted on disk)."""
        rels = [r for r in rels if not any(p in ALWAYS_IGNORED for p in r.split("/"))]
        if not rels:
            return
        with self._lock:
            known = {}
            for i in range(0, len(rels), 500):
                chunk = rels[i:i + 500]
                marks = ",".join("?" * len(chunk))
                known.update({p: (m, s) for p, m, s in self._db.execute(
                    f"SELECT path, mtime_ns, size FROM files WHERE path IN ({marks})", chunk)})
            self._store(rels, known, drop_missing=False)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _store(self, rels: Sequence[str], known: dict[str, tuple[int, int]], *,
               drop_missing: bool) -> None:
        """Read the files of `rels` whose stat differs from `known`, write what changed, and
        publish the new list of files. Called with the lock held."""
        files = {} if drop_missing else dict(self._files)
        gone: list[str] = []
        fresh: list[tuple[str, int, int, str, list[Definition], dict[str, int]]] = []
        for rel in rels:
            seen = os.path.join(self.root, rel)
            try:
                info = os.lstat(seen)
            except OSError:
                gone.append(rel)
                continue
            old = known.get(rel)
            if old == (info.st_mtime_ns, info.st_size):
                prev = self._files.get(rel)
                files[rel] = prev if prev is not None else FileInfo(rel, info.st_size, "")
                continue
            read = self._read(rel, info)
            if read is None:
                gone.append(rel)
                continue
            note, defs, words = read
            fresh.append((rel, info.st_mtime_ns, info.st_size, note, defs, words))
            files[rel] = FileInfo(rel, info.st_size, note)
        if drop_missing:
            gone.extend(p for p in known if p not in files)
        for rel in gone:
            files.pop(rel, None)
        self.read_count = len(fresh)
        if fresh or gone:
            self._write(fresh, gone)
        if drop_missing and not self._files and known:
            # first refresh in this process from a cache: notes come from the database
            notes = dict(self._db.execute("SELECT path, note FROM files WHERE note != ''"))
            for rel, note in notes.items():
                if rel in files and not files[rel].note:
                    files[rel] = FileInfo(rel, files[rel].size, note)
        self._files = files

    def _write(self, fresh: list[tuple[str, int, int, str, list[Definition], dict[str, int]]],
               gone: list[str]) -> None:
        db = self._db
        try:
            db.execute("BEGIN")
            for rel in [*gone, *(f[0] for f in fresh)]:
                db.execute("DELETE FROM files WHERE path = ?", (rel,))
                db.execute("DELETE FROM defs WHERE path = ?", (rel,))
                db.execute("DELETE FROM words WHERE id IN (SELECT id FROM paths WHERE path = ?)",
                           (rel,))
            db.executemany("INSERT INTO files VALUES (?, ?, ?, ?)",
                           [(rel, m, s, note) for rel, m, s, note, _, _ in fresh])
            db.executemany("INSERT INTO defs VALUES (?, ?, ?, ?, ?, ?)",
                           [(rel, d.name, d.name.lower(), d.kind, d.line, int(d.top))
                            for rel, _, _, _, defs, _ in fresh for d in defs])
            for rel, *_, words in fresh:
                if words:
                    db.execute("INSERT OR IGNORE INTO paths (path) VALUES (?)", (rel,))
                    (key,) = db.execute("SELECT id FROM paths WHERE path = ?", (rel,)).fetchone()
                    db.executemany("INSERT INTO words VALUES (?, ?, ?)",
                                   [(w, key, n) for w, n in words.items()])
            db.execute("COMMIT")
        except sqlite3.Error:
            if db.in_transaction:
                db.execute("ROLLBACK")
            self._db = self._open(memory=True)  # the cache failed (disk full, damaged)
            db = self._db

    def _read(self, rel: str, info: os.stat_result
              ) -> tuple[str, list[Definition], dict[str, int]] | None:
        """(note, definitions, words) of a file; None when it is not a regular file."""
        full = os.path.join(self.root, rel)
        if stat.S_ISLNK(info.st_mode):
            real = os.path.realpath(full)
            inside = real.startswith(str(self.root) + os.sep)
            if not inside or (os.sep + ".git" + os.sep) in real[len(str(self.root)):] + os.sep:
                return "a link that leaves the repository", [], {}
            try:
                info = os.stat(full)
            except OSError:
                return None
        if not stat.S_ISREG(info.st_mode):
            return None
        if info.st_size > MAX_INDEX_BYTES:
            return "too large to send", [], {}
        try:
            with open(full, "rb") as fh:
                data = fh.read(MAX_INDEX_BYTES + 1)
        except OSError as exc:
            return f"unreadable ({exc.strerror})", [], {}
        if looks_binary(data):
            return "binary", [], {}
        text = data.decode("utf-8", "replace")
        if os.path.splitext(rel)[1].lower() not in SOURCE_SUFFIXES:
            return "", [], words_of(text)
        return "", definitions(rel, text), words_of(text)

    def _open(self, memory: bool = False) -> sqlite3.Connection:
        """The database: the cache file, or one in memory when the file cannot be used."""
        if self.cache is not None and not memory:
            for attempt in range(2):
                try:
                    self.cache.parent.mkdir(parents=True, exist_ok=True)
                    db = sqlite3.connect(self.cache, timeout=5, isolation_level=None,
                                         check_same_thread=False)
                    db.execute("PRAGMA journal_mode=WAL")
                    db.execute("PRAGMA synchronous=OFF")  # a cache: lost writes are re-read
                    if self._ready_schema(db):
                        return db
                    db.close()
                except (OSError, sqlite3.Error):
                    pass
                if attempt == 0:  # damaged or from another version: start it again
                    for suffix in ("", "-wal", "-shm"):
                        with contextlib.suppress(OSError):  # (no folder to hold it: memory)
                            Path(f"{self.cache}{suffix}").unlink(missing_ok=True)
        db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self._ready_schema(db)
        return db

    def _ready_schema(self, db: sqlite3.Connection) -> bool:
        db.executescript(_TABLES)
        row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA),))
            db.execute("INSERT OR REPLACE INTO meta VALUES ('root', ?)", (str(self.root),))
            return True
        root = db.execute("SELECT value FROM meta WHERE key = 'root'").fetchone()
        return row[0] == str(SCHEMA) and root is not None and root[0] == str(self.root)


def cache_file(root: Path, data_dir: Path) -> Path:
    """Where the index of `root` is kept (one file per repository, in the data folder)."""
    import hashlib

    key = hashlib.sha256(str(Path(root).resolve()).encode()).hexdigest()[:16]
    return data_dir / "index" / f"{key}.sqlite3"
