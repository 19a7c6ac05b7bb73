"""The shared lesson frame in AppTest, on a tiny demo lesson (tests/fixtures/): lecture steps,
the step in the URL, links that set every control, bad links, and the link to this view."""

import re
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from apptest_helpers import all_text, figures, open_linked, sidebar_link
from streamlit.testing.v1 import AppTest

FIXTURE_APP = str(Path(__file__).resolve().parents[2] / "fixtures" / "lecture_app.py")
VALID = {"sentence": "one two three four", "count": "3", "rate": "0.25", "show": "1", "style": "b"}
EXPECTED = {"sentence": "one two three four", "count": 3, "rate": 0.25, "show": True, "style": "b"}


def open_demo(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(FIXTURE_APP, default_timeout=30)
    at.query_params.update(query or {})
    return at.run()


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def step_headings(at: AppTest) -> list[str]:
    return [str(h.value) for h in at.subheader if str(h.value).startswith("Step ")]


def shared_link(at: AppTest) -> dict[str, str]:
    """The query of the link in the sidebar's 'Share this view' box."""
    return dict(parse_qsl(urlsplit(sidebar_link(at)).query, keep_blank_values=True))


def tab_labels(at: AppTest) -> list[str]:
    return [t.label for t in at.tabs]


def test_normal_mode_shows_one_section_as_a_tab_and_only_runs_that_one():
    at = ok(open_demo())
    assert tab_labels(at) == ["Part 1", "Part 2", "Part 3"]
    assert list(figures(at)) == ["demo_0"]  # the other sections did not run
    assert not step_headings(at) and not [b for b in at.button if b.key in ("lecture_prev", "lecture_next")]
    assert "Notes for part 1." in all_text(at) and not [e for e in at.expander if e.label == "Notes"]
    assert "step" not in at.query_params  # the first section is the default

    ok(at.button(key="section_next").click().run())  # "Next: Part 2" under the section
    assert list(figures(at)) == ["demo_1"] and at.session_state["_section_tab"] == "Part 2"
    assert at.query_params.get("step") == "1" and shared_link(at)["step"] == "1"

    ok(at.button(key="section_next").click().run())
    assert list(figures(at)) == ["demo_2"] and not [b for b in at.button if b.key == "section_next"]


def test_picking_a_tab_opens_its_section_and_a_link_opens_the_linked_tab():
    at = ok(open_demo())
    at.session_state["_section_tab"] = "Part 3"  # what a click on the tab sets
    ok(at.run())
    assert list(figures(at)) == ["demo_2"]
    at = ok(open_demo({"step": "1"}))
    assert list(figures(at)) == ["demo_1"] and at.session_state["_section_tab"] == "Part 2"


def test_every_section_on_one_page_shows_them_all_in_order():
    at = ok(open_demo({"all": "1", "step": "2"}))
    assert [str(h.value) for h in at.subheader] == ["Part 1", "Part 2", "Part 3"] and not at.tabs
    assert sorted(figures(at)) == ["demo_0", "demo_1", "demo_2"]
    assert shared_link(at) == {"all": "1"}  # the step means nothing on one long page
    ok(at.sidebar.toggle(key="all").set_value(False).run())
    assert list(figures(at)) == ["demo_2"]  # back to tabs, on the section that was linked


def test_lecture_mode_walks_through_the_steps_one_at_a_time():
    at = ok(open_demo({"lecture": "1"}))
    assert step_headings(at) == ["Step 1 of 3: Part 1"]
    assert list(figures(at)) == ["demo_0"]
    assert "Takeaway 1." in [i.value for i in at.info]
    assert at.button(key="lecture_prev").disabled and not at.button(key="lecture_next").disabled
    notes = [e for e in at.expander if e.label == "Notes"]
    assert len(notes) == 1 and "Notes for part 1." in notes[0].markdown[0].value  # prose folded away

    ok(at.button(key="lecture_next").click().run())
    assert step_headings(at) == ["Step 2 of 3: Part 2"] and list(figures(at)) == ["demo_1"]
    assert at.query_params.get("step") == "1" and shared_link(at)["step"] == "1"

    ok(at.button(key="lecture_next").click().run())
    assert step_headings(at) == ["Step 3 of 3: Part 3"] and at.button(key="lecture_next").disabled

    ok(at.button(key="lecture_prev").click().run())
    assert step_headings(at) == ["Step 2 of 3: Part 2"] and at.query_params.get("step") == "1"


def test_a_linked_step_opens_there_and_a_step_too_far_opens_the_last():
    at = ok(open_demo({"lecture": "1", "step": "2"}))
    assert step_headings(at) == ["Step 3 of 3: Part 3"]
    at = ok(open_demo({"lecture": "1", "step": "9"}))
    assert step_headings(at) == ["Step 3 of 3: Part 3"] and at.query_params.get("step") == "2"


def test_switching_lessons_starts_the_next_one_at_step_1():
    at = ok(open_demo({"lecture": "1", "step": "2"}))
    at.query_params.clear()  # a browser clears the link's parameters when the menu opens another page
    ok(at.switch_page("demo_other.py").run())
    assert step_headings(at) == ["Step 1 of 2: Other 1"]
    assert "step" not in at.query_params and at.query_params.get("lecture") == "1"


def test_a_link_from_another_page_lands_on_the_step_it_names():
    at = ok(open_demo({"lecture": "1", "step": "2"}))
    at.query_params.clear()
    at.query_params.update({"step": "1"})  # st.page_link(..., query_params={"step": 1}), as the review links
    ok(at.switch_page("demo_other.py").run())
    assert step_headings(at) == ["Step 2 of 2: Other 2"]


def test_a_link_lands_on_its_step_whatever_tab_an_earlier_visit_left():
    at = ok(open_demo({"step": "0"}))
    at.query_params.clear()
    ok(at.switch_page("demo_other.py").run())
    at.session_state["_section_tab"] = "Part 1"  # the demo's tab row left behind, in the session or the browser
    at.query_params.clear()
    at.query_params.update({"step": "2"})  # "Teach it again" from another page
    ok(at.switch_page("demo_lesson.py").run())
    assert list(figures(at)) == ["demo_2"] and at.session_state["_section_tab"] == "Part 3"
    at.session_state["_section_tab"] = "Part 2"  # then a click on a tab is obeyed again
    ok(at.run())
    assert list(figures(at)) == ["demo_1"]


def test_every_section_on_one_page_scrolls_to_the_linked_step():
    at = ok(open_demo({"all": "1", "step": "2"}))
    assert list(figures(at)) == ["demo_0", "demo_1", "demo_2"]
    assert any("#section-2" in str(h.proto.body) for h in at.get("html"))


def test_the_lecture_toggle_switches_modes_and_drops_the_step_from_the_link():
    at = ok(open_demo({"lecture": "1", "step": "1"}))
    ok(at.sidebar.toggle(key="lecture").set_value(False).run())
    assert not step_headings(at) and list(figures(at)) == ["demo_1"]  # the same section, now as a tab
    assert "lecture" not in at.query_params and at.query_params.get("step") == "1"


def test_a_link_sets_every_control_and_the_shared_link_reproduces_it():
    at = ok(open_demo({**VALID, "seed": "7", "contrast": "1"}))
    for key, value in EXPECTED.items():
        assert at.session_state[key] == value, key
    assert at.text_input(key="sentence").value == EXPECTED["sentence"]
    assert at.slider(key="count").value == 3 and at.slider(key="rate").value == 0.25
    assert at.toggle(key="show").value is True and at.selectbox(key="style").value == "b"
    assert at.sidebar.toggle(key="contrast").value is True
    assert not at.warning  # nothing needed changing
    assert shared_link(at) == {**VALID, "seed": "7", "contrast": "1"}
    # the figures were drawn from the linked values: 3 words, rate 0.25
    assert list(figures(at)["demo_0"]["data"][0]["y"]) == pytest.approx([0.75, 0.75, 1.25])


def test_the_shared_link_follows_a_change_made_on_this_run():
    at = ok(open_demo())
    assert shared_link(at) == {}
    ok(at.slider(key="count").set_value(4).run())
    ok(at.text_input(key="sentence").input("a b c d e").run())
    assert shared_link(at) == {"count": "4", "sentence": "a b c d e"} == at.query_params


def test_a_bad_link_opens_with_the_nearest_valid_values_and_says_what_changed():
    bad = {
        "sentence": "x" * 20_000,
        "count": "abc",
        "rate": "7",
        "show": "maybe",
        "style": "zzz",
        "seed": "abc",
        "step": "-3",
        "lecture": "`![img](http://x)`",
        "bogus": "1",
    }
    at = ok(open_demo(bad))
    assert at.session_state["sentence"] == "x" * 2000
    assert (at.session_state["count"], at.session_state["rate"]) == (2, 1.0)
    assert (at.session_state["show"], at.session_state["style"], at.session_state["seed"]) == (False, "a", 0)
    notices = "\n".join(w.value for w in at.warning)
    for said in ("`sentence` was 20,000 characters", "`count=abc` is not a number", "`rate=7` is outside 0..1"):
        assert said in notices
    for said in ("`show=maybe`", "`style=zzz`", "`seed=abc` is not a number", "`step=-3` is outside", "`bogus`"):
        assert said in notices
    assert "`lecture='![img](http://x)'` is not true/false" in notices  # kept inside a code span: shown as text
    assert not step_headings(at)  # the malformed lecture flag fell back to off


def test_a_step_past_the_lessons_last_says_which_step_it_opened():
    at = open_linked("block", {"lecture": "1", "step": "99"}, every_section=False)
    assert not at.exception
    said = " ".join(i.value for i in at.info)
    n = int(re.search(r"Step \d+ of (\d+)", " ".join(str(h.value) for h in at.subheader)).group(1))
    assert f"`step=99` is past this lesson's steps, 0–{n - 1}: opening step {n - 1}" in said
    assert f"Step {n} of {n}" in " ".join(str(h.value) for h in at.subheader)
    assert "using 50" not in " ".join(w.value for w in at.warning)
