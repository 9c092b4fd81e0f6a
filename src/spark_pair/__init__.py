"""spark-pair: a terminal pair programmer for Spark-class coding models."""

import sys

__version__ = "0.1.0"

# httpx imports its optional command-line tool (httpx._main) at import time, and that pulls in
# rich and pygments (~60 ms, and UI code in the core). Nothing here uses httpx's CLI: when httpx
# is not loaded yet, make that optional import fail so httpx skips it, as it does by design.
if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
