"""A full disk, in the data folder or under the repository: the run says what failed, what the
tree holds now and what to free or run, with exit 5, never an internal error. The disk is a
small tmpfs where one can be mounted here (root), else the fault is injected."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.runs import A_NEW, A_PY, check_schema, cli, env_for, lines_of, make_repo, tree

from spark_pair.base.exitcodes import ExitCode
from spark_pair.edits.journal import Journal
from spark_pair.sim.process import SimProcess

B_PY = "def other():\n    return 1\n"
B_NEW = "def other():\n    return 2\n"
TWO = ("```diff\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
       "-    return 'hello ' + name\n+    return f'hello {name}'\n"
       "--- a/b.py\n+++ b/b.py\n@@ -1,2 +1,2 @@\n def other():\n-    return 1\n+    return 2\n"
       "```\n")


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 512 KiB tmpfs, filled up."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or 'not root'}); "
                    "the injected fault below covers the same step")
    try:
        with open(mount / "filler", "wb", buffering=0) as f, pytest.raises(OSError):
            while True:
                f.write(b"\0" * 4096)
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _check_refused_for_space(res: subprocess.CompletedProcess[str], data: Path) -> None:
    assert res.returncode == ExitCode.CONFLICT, res.stderr
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    [error] = [ln for ln in lines if ln["type"] == "error"]
    assert error["kind"] == "apply" and "No space left on device" in error["message"]
    assert "nothing was changed" in error["hint"] and f"holding {data} is full" in error["hint"]
    assert lines[-1]["exit_name"] == "CONFLICT"


def test_a_full_data_folder_is_reported_like_a_read_only_one(sim: SimProcess, tmp_path: Path,
                                                           full_disk: Path) -> None:
    """The first bytes a run writes in its data folder (the journal lock's process id) found
    the disk full: that was an internal error (exit 1)."""
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    home = full_disk / "home"
    sim.configure(default=TWO.split("--- a/b.py")[0] + "```\n")
    res = subprocess.run(cli() + ["run", "edit", "--apply", "--json"], cwd=repo,
                         env=env_for(home, sim), capture_output=True, text=True, timeout=60)
    _check_refused_for_space(res, home / "data")
    assert tree(repo) == {"a.py": A_PY.encode()}
    left = [p.name for p in (home / "data").iterdir() if p.name.endswith(".tmp")]
    assert not left  # no empty temp file of the transport memo stays behind
    (full_disk / "filler").unlink()  # space again: the same run goes through
    res = subprocess.run(cli() + ["run", "edit", "--apply"], cwd=repo, env=env_for(home, sim),
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert (repo / "a.py").read_text() == A_NEW


NO_SPACE_FOR_THE_LOCK = """
import errno, os
def pwrite(fd, data, offset):  # the disk is full: no byte goes into the data folder
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
os.pwrite = pwrite
from spark_pair.cli.main import main
main()
"""


def test_no_space_for_the_journal_lock_is_exit_5(sim: SimProcess, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    home = tmp_path / "home"
    sim.configure(default=TWO.split("--- a/b.py")[0] + "```\n")
    res = subprocess.run([sys.executable, "-c", NO_SPACE_FOR_THE_LOCK, "run", "edit", "--apply",
                          "--json"], cwd=repo, env=env_for(home, sim), capture_output=True,
                         text=True, timeout=60)
    _check_refused_for_space(res, home / "data")
    assert tree(repo) == {"a.py": A_PY.encode()}


ROLLBACK_FAILS = """
import errno, os
from pathlib import Path
from spark_pair.edits import fsio
repo = Path.cwd().resolve()
real_replace = os.replace
def replace(src, dst, *args, **kwargs):  # the second file of the turn cannot be put in place
    if Path(dst) == repo / "b.py":
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return real_replace(src, dst, *args, **kwargs)
def atomic_write(target, *args, **kwargs):  # nor can the first be put back
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
os.replace = replace
fsio.atomic_write = atomic_write
from spark_pair.cli.main import main
main()
"""


def test_a_failed_rollback_says_what_the_tree_holds_and_what_puts_it_back(
        sim: SimProcess, tmp_path: Path) -> None:
    """It used to say the next command restores the files while its hint said nothing was
    changed."""
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY, "b.py": B_PY})
    home = tmp_path / "home"
    sim.configure(default=TWO)
    res = subprocess.run([sys.executable, "-c", ROLLBACK_FAILS, "run", "edit", "--apply",
                          "--json"], cwd=repo, env=env_for(home, sim), capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == ExitCode.CONFLICT, res.stderr
    now = {k: v for k, v in tree(repo).items() if ".sp-tmp-" not in k}  # (b.py's new content)
    assert now == {"a.py": A_NEW.encode(), "b.py": B_PY.encode()}  # as the message says
    lines = lines_of(res.stdout)
    check_schema(lines)
    [error] = [ln for ln in lines if ln["type"] == "error"]
    message, hint = error["message"], error["hint"]
    assert "writing b.py failed" in message and "putting the files back failed too" in message
    assert "a.py holds the turn's new content" in message and "b.py is as before" in message
    assert "nothing was changed" not in hint and "spark-pair undo --list" in hint
    assert "Traceback" not in res.stderr
    # what the hint says puts the tree back, once the disk has room again
    undo = subprocess.run(cli() + ["undo", "--list"], cwd=repo, env=env_for(home, sim),
                          capture_output=True, text=True, timeout=60)
    assert undo.returncode == 0, undo.stderr
    assert tree(repo) == {"a.py": A_PY.encode(), "b.py": B_PY.encode()}
    assert Journal(repo, home / "data").list_turns() == []


def test_a_spark_pair_home_that_is_a_file_is_a_config_error_everywhere(sim: SimProcess,
                                                                        tmp_path: Path) -> None:
    """SPARK_PAIR_HOME naming a file: run (text and JSON), stats and demo say so with a hint,
    exit 3, no internal error; nothing is written into the repository."""
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    home = tmp_path / "home-file"
    home.write_text("not a folder\n")
    env = env_for(home, sim)
    before = tree(repo)
    for args in (["run", "hi", "-f", "a.py", "--apply"], ["run", "hi", "--json"], ["stats"],
                 ["demo", "--headless", "--dir", str(tmp_path)]):
        done = subprocess.run(cli() + args, cwd=repo, env=env, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == ExitCode.CONFIG, (args, done.stderr)
        said = done.stdout + done.stderr
        assert "which is a file, not a folder" in said and "hint:" in done.stderr
        assert "internal error" not in said and "Traceback" not in said
        assert done.stderr.count("which is a file") == 1  # said once
    assert tree(repo) == before and home.read_text() == "not a folder\n"
