"""Adding a lesson takes what docs/architecture.md says it takes, and no more.

The test copies the project, follows the doc's recipe with the tiny lesson in tests/fixtures/new_lesson/
(one entry in encoder_core/lessons/__init__.py, five files where the recipe puts them), and then finds the
lesson where a student and a lecturer would: in the navigation, on the home page's map, in the quiz and in
the class room's list of lesson questions, answered on a sentence. A page file the registry does not name is
not in the navigation: that control shows the navigation, not the file, decides.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "new_lesson"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

# The recipe: where each file of the fixture goes (the doc must list exactly these).
RECIPE = {
    "core.py": "encoder_core/lessons/{id}.py",
    "view.py": "ui/views/{id}.py",
    "page.py": "pages/{id}.py",
    "quiz.py": "encoder_core/quiz/{id}.py",
    "questions.py": "ui/questions/{id}.py",
}
ENTRY = '    Lesson("pieces", "Counting pieces", "how many WordPiece pieces each word becomes", icon="text_fields"),\n'
LINKED = ("encoder_core/checkpoints", "encoder_core/vocab")  # data, read only: linked, not copied

CHECK = r"""
import json
from streamlit.testing.v1 import AppTest

out = {}
at = AppTest.from_file("app.py", default_timeout=180)
at.run()
out["home_exception"] = [e.value for e in at.exception]
out["home_links"] = [e.proto.label for e in at.get("page_link")]
at.switch_page("pages/pieces.py").run()
out["page_titles"] = [t.value for t in at.title]
out["page_exception"] = [e.value for e in at.exception]
charts = [e for e in at.get("bidi_component") if e.proto.component_name == "encoder_lab_chart"]
# Drawn by the chart element, or by st.plotly_chart where the copy has no static/plotly.min.js; not counting
# the element that only fetches plotly.js.
out["page_charts"] = sum("chart_" in e.proto.id for e in charts) + len(at.get("plotly_chart"))
try:  # AppTest switches only to a page the navigation registered
    at.switch_page("pages/orphan.py")
    out["orphan_refused"] = False
except ValueError:
    out["orphan_refused"] = True

from encoder_core.quiz import draw, generators, grade
out["quiz_generators"] = [g.__name__ for g in generators("pieces")]
q = draw("pieces", 5)
out["quiz_grades_itself"] = grade(q, str(q.answer)).correct
out["quiz_in_the_mix"] = any(g.lesson == "pieces" for g in generators())

from ui.room.registry import predictions
from ui.room.sources import from_prediction, proof_charts
out["room_keys"] = [k for k, p in predictions().items() if p.lesson == "pieces"]
question = from_prediction("pieces-most", "the tokenization of cats", "small", 0)
out["room_choices"] = list(question.options)
out["room_answer"] = question.options[question.correct]
out["room_charts"] = len(proof_charts(question))
print("RESULT" + json.dumps(out))
"""


def recipe_files_in_doc() -> set[str]:
    """The file paths the doc's "Adding a lesson" paragraph names, with <id> for the lesson's id."""
    text = ARCHITECTURE.read_text()
    start = text.index("Adding a lesson:")
    paragraph = text[start : text.index("\n\n", start)]
    return {m for m in re.findall(r"`([\w/]+/<id>\.py)`", paragraph)}


def test_the_doc_lists_exactly_the_files_the_recipe_adds():
    named = recipe_files_in_doc()
    assert named == {path.format(id="<id>") for path in RECIPE.values()}, named
    assert "encoder_core/lessons/__init__.py" in ARCHITECTURE.read_text()


def follow_recipe(copy: Path) -> None:
    """The doc's steps: one entry in the lesson registry, then each file in its place."""
    registry = copy / "encoder_core" / "lessons" / "__init__.py"
    text = registry.read_text()
    end = text.index("\n)\nLESSON_IDS")
    registry.write_text(text[: end + 1] + ENTRY + text[end + 1 :])
    for source, target in RECIPE.items():
        shutil.copy(FIXTURE / source, copy / target.format(id="pieces"))
    # a page file that no registry entry names: it must not be reachable
    (copy / "pages" / "orphan.py").write_text('import streamlit as st\n\nst.title("Orphan page")\n')


def project_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "lab"
    copy.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "checkpoints", "vocab")
    for part in ("app.py", "pyproject.toml"):
        shutil.copy(ROOT / part, copy / part)
    for part in ("encoder_core", "ui", "pages", "classroom", ".streamlit"):
        shutil.copytree(ROOT / part, copy / part, ignore=ignore)
    for part in LINKED:
        (copy / part).symlink_to(ROOT / part, target_is_directory=True)
    return copy


@pytest.mark.slow
def test_a_lesson_added_by_the_recipe_is_in_the_navigation_the_quiz_and_the_room(tmp_path):
    copy = project_copy(tmp_path)
    follow_recipe(copy)
    env = {**os.environ, "PYTHONPATH": str(copy), "ENCODER_LAB_LEARNER_RECORDS": "off"}
    env["ENCODER_LAB_DATABASE_URL"] = f"sqlite:///{tmp_path}/room.sqlite3"
    done = subprocess.run([sys.executable, "-c", CHECK], cwd=copy, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.split("RESULT", 1)[1])

    assert found["home_exception"] == []
    assert any("Counting pieces" in label for label in found["home_links"]), found["home_links"]  # the map
    assert found["page_titles"] == ["Counting pieces"] and found["page_exception"] == []  # the navigation
    assert found["page_charts"] == 1
    assert found["orphan_refused"]  # a page file alone is not in the navigation
    assert found["quiz_generators"] == ["pieces_of_a_word"]
    assert found["quiz_grades_itself"] and found["quiz_in_the_mix"]
    assert found["room_keys"] == ["pieces-most"]
    assert sorted(found["room_choices"]) == ["no", "yes"]
    assert found["room_answer"] == "yes"  # "tokenization" splits into pieces (the tokenizer says so below)
    assert found["room_charts"] == 1


def test_the_fixture_answer_is_the_tokenizers():
    from encoder_core.model.tokenizer import english_tokenizer

    assert len(english_tokenizer().encode("tokenization").tokens) - 2 > 1
