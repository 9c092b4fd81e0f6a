"""Shared fixtures. The simulator runs as a real process on 127.0.0.1."""

from __future__ import annotations

import gc
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from spark_pair.sim.process import SimProcess


def pytest_configure(config: pytest.Config) -> None:
    """Where bytecode is not written (PYTHONDONTWRITEBYTECODE), each of the hundreds of
    processes the tests start (the CLI, the simulator, workers) would compile the project's
    modules again, about a third of a short run's CPU: they are compiled once here, before the
    xdist workers start, as pycs checked against their source's hash (never stale). What the
    tests run in their repositories (a check's python) still writes none."""
    if hasattr(config, "workerinput"):
        # a worker's heap is the whole suite's (every test module, the plugins, what earlier
        # tests left): collections every 10,000 allocations, not 700, so the full ones that
        # walk all of it come a tenth as often (the GC's CPU in the app and end-to-end tests:
        # 22 s -> 11 s); the app's own policy (base/gcpolicy.py) works from these thresholds
        gc.set_threshold(10_000, 10, 10)
    _collect_until_clean()
    if hasattr(config, "workerinput") or not sys.flags.dont_write_bytecode:
        return
    import spark_pair

    _compile_stale(Path(spark_pair.__file__).parent)
    _rewrite_asserts_once(config)


def _compile_stale(package: Path) -> None:
    """Each module whose pyc is missing or not of its source's hash. (compileall took every
    hash-checked pyc for stale, as it compares a timestamp header: all 231 again each run.)"""
    import importlib.util
    import py_compile

    for source in sorted(package.rglob("*.py")):
        pyc = importlib.util.cache_from_source(str(source))
        try:
            with open(pyc, "rb") as f:
                head = f.read(16)
        except OSError:
            head = b""
        if head[:4] == importlib.util.MAGIC_NUMBER and head[4:8] == b"\x03\x00\x00\x00" \
                and head[8:] == importlib.util.source_hash(source.read_bytes()):
            continue  # flags 3: checked against the source's hash, which it still is
        try:
            py_compile.compile(str(source), cfile=pyc, doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
        except (OSError, py_compile.PyCompileError):
            continue  # the import that meets it reports it


def _rewrite_asserts_once(config: pytest.Config) -> None:
    """pytest rewrites the asserts of each test module, conftest and assert-rewritten plugin
    (hypothesis, anyio, syrupy: 307 modules) in every worker, and caches the result only where
    bytecode is written: about 6 s of CPU a worker. Written here once for all of them, with
    pytest's own functions (private: if they change, the workers simply rewrite as before).
    Hypothesis's modules (its plugin's package, so rewritten too) load only once a test module
    imports it, each worker's 73 of them (0.45 s of CPU) and this process's at the end (for
    the plugin's summary): imported here first, they are written with the rest."""
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        pass
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        plugins = set(state.hook._rewritten_names.values())
        tail, cache_dir = rewrite.PYC_TAIL, rewrite.get_cache_dir
        read_pyc, rewrite_test, write_pyc = (rewrite._read_pyc, rewrite._rewrite_test,
                                             rewrite._write_pyc)
    except (AttributeError, ImportError, KeyError):
        return
    tests = Path(__file__).parent
    for source in sorted(plugins | {*tests.rglob("test_*.py"), *tests.rglob("conftest.py")}):
        pyc = cache_dir(source) / (source.name[:-3] + tail)
        if read_pyc(source, pyc) is not None or not rewrite.try_makedirs(pyc.parent):
            continue
        try:
            stat, code = rewrite_test(source, config)
        except SyntaxError:
            continue  # the worker that imports it reports it
        write_pyc(state, code, stat, pyc)


def _collect_until_clean() -> None:
    """pytest ends each worker with five full collections, to meet every object whose
    finalizer raises (its unraisable-exception check): they stop here once one finds nothing,
    as the rest would find nothing either (nothing freed, no finalizer run). Each walked the
    worker's whole heap: 0.2-0.6 s of CPU. (pytest's private name: if it changes, five again.)"""
    try:
        from _pytest import unraisableexception
    except ImportError:
        return

    def collect(iterations: int) -> None:
        for _ in range(iterations):
            if not gc.collect():
                break

    if callable(getattr(unraisableexception, "gc_collect_harder", None)):
        unraisableexception.gc_collect_harder = collect


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Textual memoizes a colour sum per StylesCache (an lru_cache on a method: 1024 keys
    holding their instance), so each worker kept a thousand dead widgets' rendered lines, half
    its heap, for every later collection to walk. Let go after each test."""
    styles = sys.modules.get("textual._styles_cache")
    cached = getattr(getattr(styles, "StylesCache", None), "get_inner_outer", None)
    if callable(getattr(cached, "cache_clear", None)):
        cached.cache_clear()


@pytest.fixture(scope="session")
def sim_server() -> Iterator[SimProcess]:
    """One simulator for the whole test session: unthrottled, no TTFT."""
    with SimProcess(tps=0, ttft_ms=0) as server:
        yield server


@pytest.fixture
def sim(sim_server: SimProcess) -> SimProcess:
    """The session simulator, reset to its start-up state (no faults, empty log)."""
    sim_server.reset()
    return sim_server


@pytest.fixture(scope="session")
def demo_repo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's repository as `spark-pair demo` makes it, once a session: each test's `repo`
    is a copy of its own."""
    from spark_pair.cli.commands.demo import make_repo

    return make_repo(tmp_path_factory.mktemp("demo-template"))


@pytest.fixture(scope="session")
def runs_repo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The end-to-end tests' repository (support.runs), once a session, copied per test."""
    from support.runs import make_runs_repo

    return make_runs_repo(tmp_path_factory.mktemp("runs-template") / "repo")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_repo_template: Path) -> Path:
    """The demo's git repository in tmp_path, spark-pair's home beside it and no model settings
    from the environment (the app's tests; a test module with its own `repo` fixture wins)."""
    from support.runs import copy_repo

    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    for var in ("SPARK_PAIR_BASE_URL", "SPARK_PAIR_MODEL", "SPARK_PAIR_TRANSPORT"):
        monkeypatch.delenv(var, raising=False)
    return copy_repo(demo_repo_template,
                     Path(tempfile.mkdtemp(prefix="spark-pair-demo-", dir=tmp_path)))


@pytest.fixture
def demo_sim(sim: SimProcess) -> SimProcess:
    """The simulator answering the demo's prompt with the demo's scripted reply."""
    from spark_pair.sim.demo_project import MATCH, reply_text

    sim.configure(replies=[{"match": MATCH, "text": reply_text()}])
    return sim
