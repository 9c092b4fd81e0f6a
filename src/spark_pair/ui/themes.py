"""Themes: TOML files turned into Textual themes, with the diff colours as theme variables.

The shipped themes live in the top-level `themes/` folder (inside the package as
`spark_pair/themes`); a user's own go in `<config dir>/themes/*.toml` and replace a shipped one
of the same name. A file that cannot be used is reported with its path and left out.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from textual.app import App
from textual.color import Color, ColorParseError
from textual.theme import Theme

from ..base.dirs import config_dir

DEFAULT_THEME = "dark"
# the app's own theme variables (a theme file may set each one; else derived from the palette)
DIFF_VARIABLES = ("diff-added", "diff-removed", "diff-hunk", "diff-file")
_COLOURS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground",
            "background", "surface", "panel", "boost")
_NUMBERS = ("luminosity_spread", "text_alpha")
_FIELDS = ("name", "dark", "variables", *_COLOURS, *_NUMBERS)


@dataclass(frozen=True, slots=True)
class ThemeProblem:
    path: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def diff_variable_defaults(theme: Theme) -> dict[str, str]:
    """Diff colours for a theme that does not set them, derived from its palette: an app
    returns this from `App.get_theme_variable_defaults`."""
    palette = theme.to_color_system().generate()
    return {"diff-added": palette["success-muted"], "diff-removed": palette["error-muted"],
            "diff-hunk": palette["text-accent"], "diff-file": palette["text-primary"]}


def shipped_dir() -> Path:
    return Path(str(resources.files("spark_pair") / "themes"))


def user_dir() -> Path:
    return config_dir() / "themes"


def _colour(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where} must be a colour string like \"#1d3a28\", not {value!r}")
    try:
        Color.parse(value)
    except ColorParseError:
        raise ValueError(f"{where} = {value!r} is not a colour (use \"#rrggbb\")") from None
    return value


def theme_from_data(data: dict[str, object], default_name: str) -> Theme:
    """A Theme from a theme file's table, or ValueError saying what is wrong."""
    unknown = sorted(set(data) - set(_FIELDS))
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r} (fields: {', '.join(_FIELDS)})")
    name = data.get("name", default_name)
    if not isinstance(name, str) or not name.strip() or not name.isprintable():
        raise ValueError(f"name must be a non-empty string, not {name!r}")
    if "primary" not in data:
        raise ValueError("a theme needs at least a primary colour")
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ValueError(f"dark must be true or false, not {dark!r}")
    colours = {key: _colour(data[key], key) for key in _COLOURS if key in data}
    numbers: dict[str, float] = {}
    for key in _NUMBERS:
        if key in data:
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not 0 <= value <= 1:
                raise ValueError(f"{key} must be a number from 0 to 1, not {value!r}")
            numbers[key] = float(value)
    variables = data.get("variables", {})
    if not isinstance(variables, dict):
        raise ValueError("[variables] must be a table of name = \"value\"")
    for key, value in variables.items():
        if not isinstance(value, str):
            raise ValueError(f"variables.{key} must be a string, not {value!r}")
        if key in DIFF_VARIABLES:
            _colour(value, f"variables.{key}")
    extra: dict[str, Any] = {**colours, **numbers}
    theme = Theme(name=name.strip(), dark=dark, variables=dict(variables), **extra)
    try:
        theme.to_color_system().generate()
    except Exception as exc:  # the palette itself cannot be built
        raise ValueError(f"the colours do not make a theme: {exc}") from exc
    return theme


def load_theme(path: Path) -> Theme:
    """One theme file, or ValueError with the reason (TOML errors keep their line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot be read: {exc}") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"not valid TOML: {exc}") from exc
    return theme_from_data(data, path.stem)


def load_themes(user: Path | None = None) -> tuple[dict[str, Theme], list[ThemeProblem]]:
    """The shipped themes, then the user's (same name: the user's wins), and what failed."""
    themes: dict[str, Theme] = {}
    problems: list[ThemeProblem] = []
    for folder in (shipped_dir(), user if user is not None else user_dir()):
        try:
            files = sorted(folder.glob("*.toml")) if folder.is_dir() else []
        except OSError as exc:
            problems.append(ThemeProblem(folder, f"cannot be listed: {exc}"))
            continue
        for path in files:
            try:
                theme = load_theme(path)
            except ValueError as exc:
                problems.append(ThemeProblem(path, str(exc)))
                continue
            themes[theme.name] = theme
    return themes, problems


def problems_notice(problems: list[ThemeProblem], used: str) -> str:
    """All theme failures in one message."""
    head = ("a theme file could not be used" if len(problems) == 1
            else f"{len(problems)} theme files could not be used")
    lines = [f"{head}; using the {used!r} theme:", *(f"  {p}" for p in problems)]
    return "\n".join(lines)


def install_themes(app: App[Any], wanted: str | None = None,
                   user: Path | None = None) -> list[ThemeProblem]:
    """Register every theme with `app` and switch to `wanted` (else the default); report every
    problem (bad files, an unknown name) in one warning notice. Returns the problems."""
    themes, problems = load_themes(user)
    for theme in themes.values():
        app.register_theme(theme)
    name = wanted or DEFAULT_THEME
    if name not in app.available_themes:
        where = user if user is not None else user_dir()
        problems.append(ThemeProblem(where, f"no theme named {name!r} (themes: "
                                            f"{', '.join(sorted(themes))})"))
        name = DEFAULT_THEME if DEFAULT_THEME in app.available_themes else "textual-dark"
    app.theme = name
    if problems:
        app.notify(problems_notice(problems, name), title="Themes", severity="warning",
                   timeout=15, markup=False)  # theme file paths: literal
    return problems
