"""The app's key bindings by id: what `[keys]` in the config may remap, and the keys in effect."""

from __future__ import annotations

from collections.abc import Mapping

from textual.binding import Binding


def default_keys() -> dict[str, str]:
    """binding id -> its default key(s), over every screen and widget of the app."""
    from .app import SparkPairApp
    from .screens.confirm import ConfirmScreen
    from .screens.help import HelpScreen
    from .screens.main import MainScreen
    from .widgets.files import FilesPane
    from .widgets.prompt import Prompt
    from .widgets.review import ReviewPane

    out: dict[str, str] = {}
    for owner in (SparkPairApp, MainScreen, ReviewPane, FilesPane, Prompt, ConfirmScreen,
                  HelpScreen):
        for binding in owner.BINDINGS:
            if isinstance(binding, Binding) and binding.id:
                out[binding.id] = binding.key
    return out


def unknown_ids(keymap: Mapping[str, str]) -> list[str]:
    known = default_keys()
    return sorted(k for k in keymap if k not in known)


def keys_in_effect(keymap: Mapping[str, str]) -> dict[str, str]:
    return {**default_keys(), **{k: v for k, v in keymap.items()}}
