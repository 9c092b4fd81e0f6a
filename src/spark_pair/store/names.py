"""Short readable session names ("brisk-otter"); no import beyond os (a run makes one at start)."""

from __future__ import annotations

import os

_ADJECTIVES = ("amber", "brisk", "calm", "clear", "bold", "deft", "eager", "fair", "fleet",
               "gentle", "glad", "keen", "light", "lucid", "merry", "nimble", "noble", "plain",
               "quick", "quiet", "rapid", "ready", "sharp", "steady", "sunny", "swift", "tidy",
               "vivid", "warm", "wise")
_NOUNS = ("badger", "crane", "falcon", "ferret", "finch", "fox", "gecko", "heron", "ibis",
          "lark", "lynx", "marten", "newt", "otter", "owl", "panda", "puffin", "raven", "robin",
          "seal", "shrew", "sparrow", "stoat", "swift", "tern", "toad", "vole", "wren", "yak",
          "zebra")


def new_name(attempt: int = 0) -> str:
    """An adjective and an animal; after 20 tries a number too (the pairs ran short)."""
    a, b, n = os.urandom(3)
    name = f"{_ADJECTIVES[a % len(_ADJECTIVES)]}-{_NOUNS[b % len(_NOUNS)]}"
    return name if attempt < 20 else f"{name}-{2 + n % 98}"
