"""The core must stay usable without the TUI: importing it must not pull in textual or rich."""

import subprocess
import sys

CORE = [
    "spark_pair.errors",
    "spark_pair.config",
    "spark_pair.protocol",
    "spark_pair.edits",
    "spark_pair.workspace",
    "spark_pair.store",
    "spark_pair.session",
    "spark_pair.session_events",
    "spark_pair.session_turn",
    "spark_pair.session_proposals",
    "spark_pair.session_frames",
    "spark_pair.git",
    "spark_pair.approval",
    "spark_pair.runtime",
    "spark_pair.ops",  # telemetry (its SDK too, where the extra is installed)
]


def test_core_does_not_import_textual_or_rich():
    code = (
        "import importlib, importlib.util, pkgutil, sys\n"
        f"for name in {CORE!r}:\n"
        "    if importlib.util.find_spec(name) is None: continue\n"
        "    mod = importlib.import_module(name)\n"
        "    for info in pkgutil.walk_packages(getattr(mod, '__path__', []), name + '.'):\n"
        "        importlib.import_module(info.name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core pulled in: {out.stdout.strip()}"


def test_layering_test_would_notice_a_leak():
    code = "import spark_pair.errors, rich; import sys; print('rich' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
