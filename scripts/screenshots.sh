#!/usr/bin/env bash
# docs/screenshots/, regenerated from the browser tests that take them (make screenshots):
# every lesson at its defaults (1400x1000), a lecture-mode step at 1920x1080, the class room as
# the lecturer sees it and as a student's phone (390x844) sees it.
set -euo pipefail
cd "$(dirname "$0")/.."
shots=artifacts/screenshots
.venv/bin/python -m pytest -q -p no:cacheprovider \
  "tests/browser/test_lessons_browser.py::test_lesson_default_state_screenshot" \
  "tests/browser/test_lecture_hall.py::test_every_lecture_step_reads_from_the_back_of_the_hall[chromium-attention]" \
  "tests/browser/test_room_browser.py::test_students_answers_appear_on_the_lecturers_chart_without_a_reload"
for lesson in $(.venv/bin/python -c "from encoder_core.lessons import LESSON_IDS; print(*LESSON_IDS)"); do
  cp "$shots/$lesson.png" "docs/screenshots/$lesson.png"
done
cp "$shots/lecture-hall/attention-step1.png" docs/screenshots/lecture-attention.png
cp "$shots/room_lecturer.png" docs/screenshots/room-lecturer.png
cp "$shots/room_student_phone.png" docs/screenshots/room-student-phone.png
ls -l docs/screenshots
