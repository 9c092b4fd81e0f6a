"""The checks behind `spark-pair doctor`: plain results, no UI.

Each check passes, fails (with the error's message and fix hint) or is skipped because a check it
needs did not pass. Every check is capped in time (`check_timeout_s`), so a stalled stream cannot
hang the run. The probes talk to the endpoint directly (httpx / websockets) so that each failure
can be pinned on one step: resolve, connect, authenticate, list models, answer, stream, chain.
"""

from .results import DoctorConfig, DoctorReport, DoctorResult, config_from_settings
from .runner import CHECKS, run_doctor
from .wire import url_problems

__all__ = ["CHECKS", "DoctorResult", "DoctorConfig", "DoctorReport", "config_from_settings",
           "run_doctor", "url_problems"]
