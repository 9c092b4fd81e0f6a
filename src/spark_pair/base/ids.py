"""Turn ids: sortable and unique, the UTC time plus random hex (20260101-120000-a1b2c3). The
session names a turn with one before it streams; the journal keeps the turn under it."""

from __future__ import annotations

import os
import time


def new_turn_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + os.urandom(3).hex()
