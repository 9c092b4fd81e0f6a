"""The undo journal: before-images of every file a turn touches, kept per repository.

Layout under data_dir/journal/<key>/ (key = hash of the real repo path):
    <turn id>/record          the manifest and the before-images (record.py)
    <turn id>/committed       written once every file of the turn is in place
    <turn id>/undone          written once an undo of this turn committed (on an undo turn: once
                              a redo of it committed)
    <turn id>/git-commit      the id of the commit the turn went into (commits.py), if any
    <turn id>/finishing       on an undo or redo turn until the markers it sets are written
    unfinished/<turn id>      (beside the turns) an empty file per turn that may be unfinished
    lock                      the lock (lock.py)

The modules: record (the format), lock, folder (the journal folder: lock, a turn's record,
commit and index entry, the list of turns), recovery (rollback of interrupted turns), write
(a turn written in four synced steps), undo (undo and redo; the `Journal` class), commits
(a turn's files and the commit it went into).

The index of unfinished turns keeps recovery's cost independent of the history (every apply
recovers first). Its invariant: every turn folder without `committed`, or with `finishing`,
has its entry in unfinished/. The entry is made before the turn's folder and synced with it,
before any repository file is touched; it goes (unsynced) only once what it guards is on disk:
the commit of an apply, the markers of an undo or redo, the rollback (the folder renamed away
and the journal's folder synced). An entry left by a lost removal is only looked at and dropped.
recover() then reads only unfinished/, when the lock's last holder wrote that the index was
complete and the journal's folder has the mtime it left (a crash, or a lost write of the lock,
leaves it otherwise: new turn folders change the mtime, on disk together with them); otherwise
it looks at every turn folder, and the index is complete once it is done.

A record cut short by a crash (shorter than its manifest says) was never finished, so no file
was touched, and recovery discards it. Neither undo nor recovery ever writes one of
spark-pair's own files (edits.paths.confine_target).
"""

from .commits import TurnFile
from .record import FileChange, TurnInfo, TurnKind
from .recovery import Recovery
from .undo import Journal
from .write import missing_dirs, write_changes, writes_begun

__all__ = ["FileChange", "Journal", "Recovery", "TurnFile", "TurnInfo", "TurnKind", "missing_dirs",
           "write_changes", "writes_begun"]
