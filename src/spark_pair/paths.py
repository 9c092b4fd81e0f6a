"""Where spark-pair keeps its config and data. SPARK_PAIR_HOME relocates both (tests use it)."""

from __future__ import annotations

import os
from pathlib import Path


def home_override() -> Path | None:
    value = os.environ.get("SPARK_PAIR_HOME", "").strip()
    return Path(value).expanduser() if value else None


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
