"""A small repository for the automatic context's tests: a module defining `parse_header`, one
using it, and the commands that make a git repository of files."""

from __future__ import annotations

import subprocess
from pathlib import Path

from spark_pair.workspace.candidates import suggest
from spark_pair.workspace.index import RepoIndex

UTILS = ("def parse_header(line):\n    name, _, value = line.partition(':')\n"
         "    return name.strip(), value.strip()\n\n\ndef format_date(ts):\n    return str(ts)\n")
CLIENT = ("from .utils import parse_header\n\n\nclass Client:\n    def read(self, lines):\n"
          "        return [parse_header(x) for x in lines]\n")
CLI = "import argparse\n\n\ndef main():\n    return argparse.ArgumentParser().parse_args()\n"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c",
                    "commit.gpgsign=false", *args], cwd=root, check=True, capture_output=True,
                   timeout=30)


def make_repo(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def http_files() -> dict[str, str]:
    return {"http/utils.py": UTILS, "http/client.py": CLIENT, "src/app/cli.py": CLI,
            "hello.py": "print('hi')\n", "tests/test_utils.py": "def test_x():\n    pass\n",
            "README.md": "# demo\n"}


def commit_all(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def found(root: Path, instruction: str, cache: Path | None = None,
          **kw: object) -> dict[str, str]:
    """The chosen files and their reasons (an index kept in `cache`, if given)."""
    index = RepoIndex(root, cache)
    index.refresh()
    try:
        return {c.path: c.label for c in suggest(root, instruction, index, **kw).files}  # type: ignore[arg-type]
    finally:
        index.close()


RENAME = ("--- a/http/utils.py\n+++ b/http/utils.py\n@@ -1,3 +1,3 @@\n-def parse_header(line):\n"
          "+def parse_head(line):\n     name, _, value = line.partition(':')\n"
          "     return name.strip(), value.strip()\n")
