#!/usr/bin/env bash
# docs/screenshots/, regenerated from the browser tests that take them (make screenshots):
# every lesson at its defaults (1400x1000), a lecture-mode step at 1920x1080, the class room as
# the lecturer sees a round's reveal and as a student's phone (390x844) sees a vote, and a deck presented to a
# room: the builder and the projector (1440x900), the presenter view on a tablet (1280x720) and a phone.
set -euo pipefail
cd "$(dirname "$0")/.."
shots=artifacts/screenshots
.venv/bin/python -m pytest -q -p no:cacheprovider \
  "tests/browser/test_lessons_browser.py::test_lesson_default_state_screenshot" \
  "tests/browser/test_lecture_hall.py::test_every_lecture_step_reads_from_the_back_of_the_hall[chromium-attention]" \
  "tests/browser/test_room_rounds_browser.py::test_a_lecturer_and_three_phones_run_a_whole_round_across_two_processes" \
  "tests/browser/test_deck_browser.py::test_a_deck_presented_to_a_room_from_the_projector_and_the_presenter_view"
for lesson in $(.venv/bin/python -c "from encoder_core.lessons import LESSON_IDS; print(*LESSON_IDS)"); do
  cp "$shots/$lesson.png" "docs/screenshots/$lesson.png"
done
cp "$shots/lecture-hall/attention-step1.png" docs/screenshots/lecture-attention.png
cp "$shots/room-rounds/lecturer_reveal.png" docs/screenshots/room-lecturer.png
cp "$shots/room-rounds/phone_vote1.png" docs/screenshots/room-student-phone.png
for shot in builder projector presenter phone; do
  cp "$shots/deck/$shot"*.png "docs/screenshots/deck-$shot.png"
done
ls -l docs/screenshots
