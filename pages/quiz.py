"""Quiz: questions from every lesson, mixed, each answer computed by the model; a score per lesson."""

import streamlit as st

from ui.frame import quiz_widget as quiz
from ui.frame import review
from ui.frame.predict import REVIEW_STEP
from ui.frame.sections import Section, finish, narrative, render_sections, start
from ui.room import session as rooms

PARAMS = [quiz.QUIZ_SEED, quiz.QUIZ_QUESTION, rooms.ROOM]
quiz.repair_link_seed()
start("quiz", PARAMS)
# A class room's link (/quiz?room=CODE) fixes the quiz number and sends each answer to the room.
room = rooms.find_room(st.session_state.get(rooms.ROOM.key))
in_room = room.room is not None
if in_room:
    st.session_state[quiz.QUIZ_SEED.key] = room.room.quiz_seed  # before the control below is drawn

st.title("Quiz: check yourself")
narrative(
    "Questions from every lesson, mixed. Each one is built from fresh numbers, and its answer is worked out "
    "by the same code the lessons run, never typed in by hand: after you submit you see the working, with "
    "the numbers. The quiz number is in the link, so everyone who opens the same link gets the same questions "
    "in the same order (handy for a class), and the question number is in it too: `/quiz?quiz_seed=42&question=6` "
    "opens question 6 of quiz 42."
)
if room.kind == "open":
    rooms.remember_student()
    st.info(
        f"You are in class room **{room.code[:4]}-{room.code[4:]}**. Your first answer to each question goes to your "
        "lecturer with no name attached: only a random id this browser keeps for a day, so each question counts once.",
        icon=":material/groups:",
    )
    if notice := rooms.join(room.code):
        st.warning(notice)
elif room.notice:
    st.warning(room.notice)

c_seed, c_new = st.columns([2, 1], vertical_alignment="bottom")
c_seed.number_input(
    "Quiz number",
    min_value=int(quiz.QUIZ_SEED.lo),
    max_value=int(quiz.QUIZ_SEED.hi),
    step=1,
    key=quiz.QUIZ_SEED.key,
    disabled=in_room,
    help="Same number, same questions. Share the page's link and your class gets this quiz.",
)
c_new.button("New quiz", key="quiz_new", on_click=quiz.new_quiz, disabled=in_room, help="Draw a fresh quiz number.")
if not in_room and st.button("Open a class room with this quiz", key="quiz_open_room", icon=":material/groups:"):
    st.switch_page("pages/room.py")


def question_section() -> None:
    on_answer = rooms.recorder(room.code) if in_room else None  # a closed room answers "not sent"
    quiz.check_yourself(
        None, key_prefix="quiz_page", title=None, question_key=quiz.QUIZ_QUESTION.key, on_answer=on_answer
    )


def score_section() -> None:
    st.dataframe(quiz.scores(), hide_index=True)
    st.caption("Only your first answer to each question counts. Scores last as long as this browser session.")
    quiz.results_download("quiz_results_csv")


def review_section() -> None:
    items = review.due_items()
    if not items:
        st.caption(
            "Nothing to review just now. When a lesson asks you to predict something and the model shows you "
            "otherwise, or you skip it, the idea comes back here as a new question, on new numbers and sentences; "
            "once you answer it right it comes back after 1, 3, 7 and 21 days. *My progress* shows when."
        )
        return
    st.caption(
        f"{len(items)} idea{'s' if len(items) != 1 else ''} due, each asked anew on a question you have not "
        "seen: the ones you were sure of and missed come first."
    )
    for item in items:
        st.markdown(f"**{review.idea_label(item.concept)}**, because {review.WHY[item.why]}.")
        if item.lesson and item.step is not None:
            st.page_link(
                f"pages/{item.lesson}.py",
                label=f"Where {review.lesson_title(item.lesson)} teaches it (step {item.step + 1})",
                icon=":material/school:",
                query_params={"step": item.step},
            )
        quiz.check_yourself(
            None,
            key_prefix=f"{quiz.REVIEW_PREFIX}{item.concept}",
            title=None,
            concept=item.concept,
            review_seed=review.fresh_seed(item.concept, item.seen),
        )


SECTIONS = [
    Section("Question", "Answer, submit, and read the working the model did.", question_section),
    Section("Your score by lesson", "Right answers out of answered questions, per lesson.", score_section),
    Section("Review what I missed", "New questions on the ideas your predictions missed or skipped.", review_section),
]
REVIEW_SECTION = SECTIONS[REVIEW_STEP]  # the sidebar's "Review what I missed" links this step (a test checks it)


render_sections(SECTIONS, PARAMS)
finish(PARAMS)
