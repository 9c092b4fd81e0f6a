"""Real git repositories for the commit tests: git run with no machine-wide configuration, a
person's identity, and the simulator's replies to the edit and to the commit-message request."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

A_DIFF = """```diff
--- a/a.py
+++ b/a.py
@@ -1,2 +1,2 @@
 def greet(name):
-    return 'hello ' + name
+    return f'hello {name}'
```
"""
MESSAGE = "Use an f-string in greet\n\nShorter and reads better."
OTHER = "first\n"


def replies(message: str = MESSAGE) -> list[dict[str, str]]:
    return [{"match": "Write the commit message", "text": message},
            {"match": "FSTRING", "text": A_DIFF}]


def git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    res = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30,
                         env={**os.environ, **GIT_ENV, **(env or {})})
    assert res.returncode == 0, res.stderr
    return res.stdout


# the tests' git reads no configuration of this machine's (a global hooksPath, signing)
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def identity(root: Path) -> Path:
    """Give the repository a person's name and e-mail (the author of its commits)."""
    git(root, "config", "user.name", "Pat Person")
    git(root, "config", "user.email", "pat@example.invalid")
    return root
