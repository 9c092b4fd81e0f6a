"""Where spark-pair keeps its config and data. SPARK_PAIR_HOME relocates both (tests use it)."""

from __future__ import annotations

import os
from pathlib import Path


def home_override() -> Path | None:
    value = os.environ.get("SPARK_PAIR_HOME", "").strip()
    if not value:
        return None
    home = Path(value).expanduser()
    if home.exists() and not home.is_dir():
        from .errors import ConfigError

        raise ConfigError(f"SPARK_PAIR_HOME is {home}, which is a file, not a folder",
                          hint="point SPARK_PAIR_HOME at a folder (it is made when missing), "
                               "or unset it for the default places")
    return home


def config_dir() -> Path:
    """The user config folder (holds config.toml)."""
    home = home_override()
    if home is not None:
        return home / "config"
    import platformdirs

    return Path(platformdirs.user_config_dir("spark-pair", appauthor=False))


def data_dir() -> Path:
    """The user data folder (request store, undo journals, bench results)."""
    home = home_override()
    if home is not None:
        return home / "data"
    import platformdirs

    return Path(platformdirs.user_data_dir("spark-pair", appauthor=False))


def user_config_file() -> Path:
    return config_dir() / "config.toml"


PROJECT_FILE = ".spark-pair.toml"


def own_dirs() -> list[tuple[str, Path]]:
    """spark-pair's own folders, each with what it holds (config, undo journal, request log)."""
    return [("config folder", config_dir()),
            ("data folder (undo journal, request log)", data_dir())]


def _inside(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent.rstrip(os.sep) + os.sep)


def own_file(full: Path, data_dirs: tuple[Path, ...] = ()) -> str | None:
    """Why `full` is one of spark-pair's own files (a project config, or anything in its config
    or data folders, `data_dirs` included), else None. A model never writes, moves or removes
    these: they decide where the key is sent and what undo and recovery write."""
    if full.name.lower() == PROJECT_FILE:
        return f"{PROJECT_FILE} is spark-pair's project config (base URL, key variable)"
    real = os.path.realpath(full)
    dirs = own_dirs() + [("data folder (undo journal)", d) for d in data_dirs]
    for what, folder in dirs:
        if _inside(real, os.path.realpath(folder)):
            return f"it is inside spark-pair's {what} {folder}"
    return None


def own_dirs_inside(root: Path, data_dirs: tuple[Path, ...] = ()) -> list[str]:
    """A warning for each of spark-pair's data folders (undo journal, request log: before-images,
    prompts and replies) that lies inside the repository `root`."""
    base = os.path.realpath(root)
    out = []
    seen: set[str] = set()
    for what, folder in own_dirs() + [("data folder (undo journal)", d) for d in data_dirs]:
        real = os.path.realpath(folder)
        if folder == config_dir() or not _inside(real, base) or any(
                _inside(real, other) for other in seen):
            continue  # a folder inside one already named is not named again
        seen.add(real)
        out.append(f"spark-pair's {what} {folder} is inside this repository: a model's edits "
                   "never touch it (they are refused), but git may track it; set "
                   "SPARK_PAIR_HOME to a folder outside the repository")
    return out
