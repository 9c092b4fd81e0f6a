"""Themes: the diff colours as theme variables, with defaults derived from any theme."""

from __future__ import annotations

from textual.theme import Theme

# the app's own theme variables (a theme file may set each one)
DIFF_VARIABLES = ("diff-added", "diff-removed", "diff-hunk", "diff-file")


def diff_variable_defaults(theme: Theme) -> dict[str, str]:
    """Diff colours for a theme that does not set them, derived from its palette: an app
    returns this from `App.get_theme_variable_defaults`."""
    palette = theme.to_color_system().generate()
    return {"diff-added": palette["success-muted"], "diff-removed": palette["error-muted"],
            "diff-hunk": palette["text-accent"], "diff-file": palette["text-primary"]}
