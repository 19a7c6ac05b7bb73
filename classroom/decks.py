"""A lecturer's deck: an ordered list of steps, each a lesson view or a question, saved in the class room's
store, exported and imported as a JSON file, and opened by link (?deck=<id>). Plain data: no UI, no model,
no lesson registry here (the app passes in what it knows: Known).

The file, version 1 (docs/lecturers.md, "Build and present a deck"):

    {"format": "encoder-lab-deck", "version": 1, "title": "Encoders in one lecture",
     "steps": [
       {"kind": "view", "lesson": "attention", "params": {"step": 0, "sentence": "the cat sat"}},
       {"kind": "prediction", "key": "attention-rows", "sentence": "the cat sat", "model": "small", "seed": 0},
       {"kind": "quiz", "generator": "masking_split", "seed": 0},
       {"kind": "typed", "prompt": "What does $\\sqrt{d}$ do?", "options": ["scales the scores", "..."],
        "right": 1}
     ]}

- view: a lesson's page with its controls as its link holds them (params: the link's values; `step` is the
  lesson's section, from 0, as in its link);
- prediction: a lesson's prediction registered for class rooms (ui/room/registry.py), asked on `sentence`
  with `model` (small, mlm or minilm; default small) and `seed` (default 0);
- quiz: the quiz engine's question from `generator` at `seed` (its id is "<generator>:<seed>");
- typed: the lecturer's own question: `prompt` (Markdown, LaTeX between $ signs), 2 to 6 `options`, and
  `right`, the right option's number counted from 1 as the room's form asks it.

Every step may carry a `note` (a line for the lecturer). A deck whose file has a bad step is refused whole,
and the message names the step (its number, from 1, and kind) and what is wrong with it. A step naming a
lesson, prediction or quiz generator the app does not have (any more) is a problem (problems()): an import
refuses it; a deck saved earlier opens with that step flagged, never silently dropped.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import parse_qsl, urlsplit

from sqlalchemy import select

from .questions import MAX_OPTIONS, MIN_OPTIONS, BadQuestion, typed
from .schema import decks

FORMAT, VERSION = "encoder-lab-deck", 1
KINDS = ("view", "prediction", "quiz", "typed")
KIND_NAMES = {"view": "lesson view", "prediction": "lesson prediction", "quiz": "quiz question", "typed": "typed"}
MODELS = ("small", "mlm", "minilm")  # ui.frame.state.MODEL's options (a test checks they agree)
MAX_STEPS = 500
MAX_FILE_BYTES = 1_000_000
TITLE_CHARS = 120
NOTE_CHARS = 200
SENTENCE_CHARS = 200  # as the room's sentence box
VALUE_CHARS = 2000  # a link value, as ui.frame.params.MAX_TEXT
LINK_CHARS = 4 * VALUE_CHARS  # a whole pasted link
MAX_SEED = 2**31 - 1
DECK_PARAMS = ("deck", "deck_step")  # the deck's own place in a link: a view step may not set them
_PARAM = re.compile(r"[a-z][a-z0-9_]{0,31}")
_LESSON = re.compile(r"[a-z][a-z0-9_]{0,31}")
_ID = re.compile(r"[0-9a-f]{12}")
ID_CHARS = 12  # hex digits of the SHA-256 of the deck's file: 48 bits


class BadDeck(ValueError):
    """A deck file that cannot be used; the message says which step and what to change."""


@dataclass(frozen=True)
class ViewStep:
    lesson: str
    params: dict = field(default_factory=dict)  # the link's values, str | int | float | bool each
    note: str = ""
    kind: str = "view"

    @property
    def step(self) -> int:
        """The lesson's section the view opens (from 0)."""
        return int(self.params.get("step", 0))


@dataclass(frozen=True)
class PredictionStep:
    key: str
    sentence: str
    model: str = "small"
    seed: int = 0
    note: str = ""
    kind: str = "prediction"


@dataclass(frozen=True)
class QuizStep:
    generator: str
    seed: int
    note: str = ""
    kind: str = "quiz"

    @property
    def question_id(self) -> str:
        return f"{self.generator}:{self.seed}"


@dataclass(frozen=True)
class TypedStep:
    prompt: str
    options: tuple[str, ...]
    right: int  # the right option's number, from 1
    note: str = ""
    kind: str = "typed"


Step = ViewStep | PredictionStep | QuizStep | TypedStep


@dataclass(frozen=True)
class Deck:
    title: str
    steps: tuple[Step, ...]

    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "title": self.title, "steps": [step_dict(s) for s in self.steps]}

    def to_json(self) -> str:
        """The file a lecturer downloads: it imports back to the same deck."""
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n"

    @property
    def id(self) -> str:
        """Its link's id: from its content, so saving the same deck twice gives the same link, and a link
        always opens the deck as it was saved (an edited deck is a new link)."""
        canonical = json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:ID_CHARS]


@dataclass(frozen=True)
class Known:
    """What the app has: lesson ids, registered predictions (key -> its lesson), quiz generators' names."""

    lessons: frozenset[str]
    predictions: Mapping[str, str]
    generators: frozenset[str]


@dataclass(frozen=True)
class Problem:
    number: int  # the step's number, from 1
    kind: str
    what: str

    def __str__(self) -> str:
        return f"Step {self.number} ({KIND_NAMES.get(self.kind, self.kind)}): {self.what}"


def step_dict(s: Step) -> dict:
    if isinstance(s, ViewStep):
        out = {"kind": "view", "lesson": s.lesson, "params": dict(s.params)}
    elif isinstance(s, PredictionStep):
        out = {"kind": "prediction", "key": s.key, "sentence": s.sentence, "model": s.model, "seed": s.seed}
    elif isinstance(s, QuizStep):
        out = {"kind": "quiz", "generator": s.generator, "seed": s.seed}
    else:
        out = {"kind": "typed", "prompt": s.prompt, "options": list(s.options), "right": s.right}
    if s.note:
        out["note"] = s.note
    return out


# ------------------------------------------------------------------ reading a file


def _text(raw: dict, name: str, limit: int, *, required: bool = True) -> str:
    value = raw.get(name, "")
    if not isinstance(value, str):
        raise ValueError(f"`{name}` must be text, not {type(value).__name__}.")
    value = value.strip()
    if required and not value:
        raise ValueError(f"`{name}` is missing or empty.")
    if len(value) > limit:
        raise ValueError(f"`{name}` is {len(value):,} characters long; keep it to {limit}.")
    return value


def _int(raw: dict, name: str, lo: int, hi: int, default: int | None = None) -> int:
    if name not in raw and default is not None:
        return default
    value = raw.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"`{name}` must be a whole number from {lo} to {hi}, not {json.dumps(value)[:40]}.")
    if not lo <= value <= hi:
        raise ValueError(f"`{name}` is {value}; it must be from {lo} to {hi}.")
    return value


FIELDS = {
    "view": {"kind", "lesson", "params", "note"},
    "prediction": {"kind", "key", "sentence", "model", "seed", "note"},
    "quiz": {"kind", "generator", "seed", "note"},
    "typed": {"kind", "prompt", "options", "right", "note"},
}


def _params(raw: object) -> dict:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValueError('`params` must be an object of the link\'s values, like {"step": 2, "sentence": "..."}.')
    out = {}
    for name, value in raw.items():
        if not _PARAM.fullmatch(str(name)):
            raise ValueError(f"`params` has a name {json.dumps(name)[:40]} no link uses (lower-case letters, _).")
        if name in DECK_PARAMS:
            raise ValueError(f"`params` may not set `{name}`: the deck sets it.")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"`params.{name}` is not a usable number.")
        if not isinstance(value, str | int | float | bool):
            raise ValueError(f"`params.{name}` must be text, a number or true/false.")
        if isinstance(value, str) and len(value) > VALUE_CHARS:
            raise ValueError(f"`params.{name}` is {len(value):,} characters long; keep it to {VALUE_CHARS}.")
        out[name] = value
    if "step" in out:
        out["step"] = _int(out, "step", 0, 10_000)
    return out


def _step(raw: object) -> Step:
    """One step of a file; ValueError saying what is wrong (the caller names the step)."""
    if not isinstance(raw, dict):
        raise ValueError("a step must be an object with a `kind`.")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise ValueError(f"`kind` is {json.dumps(kind)[:40]}; it must be one of {', '.join(KINDS)}.")
    extra = sorted(set(raw) - FIELDS[kind])
    if extra:
        raise ValueError(f"unknown field{'s' if len(extra) > 1 else ''} {', '.join(f'`{e}`' for e in extra)}.")
    note = _text(raw, "note", NOTE_CHARS, required=False)
    if kind == "view":
        lesson = _text(raw, "lesson", 32)
        if not _LESSON.fullmatch(lesson):
            raise ValueError(f"`lesson` {json.dumps(lesson)[:40]} is not a lesson's id (like attention).")
        return ViewStep(lesson, _params(raw.get("params")), note)
    if kind == "prediction":
        model = raw.get("model", "small")
        if model not in MODELS:
            raise ValueError(f"`model` is {json.dumps(model)[:40]}; it must be one of {', '.join(MODELS)}.")
        return PredictionStep(
            _text(raw, "key", 80),
            " ".join(_text(raw, "sentence", SENTENCE_CHARS).split()),
            model,
            _int(raw, "seed", 0, MAX_SEED, default=0),
            note,
        )
    if kind == "quiz":
        return QuizStep(_text(raw, "generator", 80), _int(raw, "seed", 0, MAX_SEED), note)
    options = raw.get("options")
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise ValueError(f"`options` must be a list of {MIN_OPTIONS} to {MAX_OPTIONS} texts.")
    if any("\n" in o for o in options):
        raise ValueError("an option must be one line.")
    if any(not o.strip() for o in options):
        raise ValueError(f"option {next(i for i, o in enumerate(options, 1) if not o.strip())} is empty.")
    right = _int(raw, "right", 1, MAX_OPTIONS)
    prompt = raw.get("prompt")
    try:
        q = typed(prompt if isinstance(prompt, str) else "", "\n".join(options), right)
    except BadQuestion as err:
        raise ValueError(str(err)) from None
    return TypedStep(q.prompt, q.options, right, note)


def read_step(raw: dict) -> Step:
    """One step, as the builder makes it from its form; BadDeck saying what is wrong."""
    try:
        return _step(raw)
    except ValueError as err:
        raise BadDeck(str(err)) from None


def parse(raw: str | bytes | dict) -> Deck:
    """A deck from its file (or the file's parsed JSON). BadDeck, naming the step, if any step is bad:
    the deck is refused whole."""
    if isinstance(raw, bytes | bytearray):
        if len(raw) > MAX_FILE_BYTES:
            raise BadDeck(f"The file is {len(raw):,} bytes; a deck file is at most {MAX_FILE_BYTES:,}.")
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise BadDeck("The file is not text (UTF-8): is it the deck's .json file?") from None
    if isinstance(raw, str):
        if len(raw) > MAX_FILE_BYTES:
            raise BadDeck(f"The file is {len(raw):,} characters; a deck file is at most {MAX_FILE_BYTES:,}.")
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as err:
            raise BadDeck(f"The file is not JSON: {err.msg} at line {err.lineno}, column {err.colno}.") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise BadDeck(f'This is not a deck file: it must be a JSON object with "format": "{FORMAT}".')
    if raw.get("version") != VERSION:
        raise BadDeck(f"The deck file's version is {json.dumps(raw.get('version'))[:20]}; this app reads {VERSION}.")
    try:
        title = _text(raw, "title", TITLE_CHARS, required=False) or "Untitled deck"
    except ValueError as err:
        raise BadDeck(f"The deck's title: {err}") from None
    steps = raw.get("steps")
    if not isinstance(steps, list) or not steps:
        raise BadDeck('The deck has no steps: "steps" must be a list with at least one step.')
    if len(steps) > MAX_STEPS:
        raise BadDeck(f"The deck has {len(steps):,} steps; a deck has at most {MAX_STEPS}.")
    out = []
    for number, step in enumerate(steps, start=1):
        try:
            out.append(_step(step))
        except ValueError as err:
            kind = step.get("kind") if isinstance(step, dict) else None
            shown = KIND_NAMES.get(kind, "unknown kind") if isinstance(kind, str) else "unknown kind"
            raise BadDeck(f"Step {number} ({shown}): {err} The deck was not imported.") from None
    return Deck(title, tuple(out))


def problems(deck: Deck, known: Known) -> list[Problem]:
    """Steps naming a lesson, prediction or quiz generator the app does not have."""
    found = []
    for number, s in enumerate(deck.steps, start=1):
        if isinstance(s, ViewStep) and s.lesson not in known.lessons:
            found.append(Problem(number, s.kind, f"the lesson `{s.lesson}` is not one of this app's lessons."))
        elif isinstance(s, PredictionStep) and s.key not in known.predictions:
            found.append(Problem(number, s.kind, f"the prediction `{s.key}` is not one a room can ask."))
        elif isinstance(s, QuizStep) and s.generator not in known.generators:
            found.append(Problem(number, s.kind, f"the quiz has no generator `{s.generator}`."))
    return found


def import_deck(raw: str | bytes | dict, known: Known) -> Deck:
    """A deck from a file, checked against what the app has: refused whole (BadDeck) on any bad step."""
    deck = parse(raw)
    found = problems(deck, known)
    if found:
        more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
        listed = "; ".join(str(p) for p in found[:3])
        raise BadDeck(f"{listed}{more}. The deck was not imported.")
    return deck


def lesson_of(s: Step, known: Known | None = None) -> str:
    """The lesson a step belongs to ("" for a quiz or typed question whose lesson is not known here)."""
    if isinstance(s, ViewStep):
        return s.lesson
    if isinstance(s, PredictionStep) and known is not None:
        return known.predictions.get(s.key, "")
    return ""


def view_from_link(link: str) -> ViewStep:
    """A lesson view from a pasted link (https://host/attention?sentence=...&step=2): the path's last part is
    the lesson, the query its controls (numbers as numbers). BadDeck if it is not such a link."""
    text = str(link or "").strip()
    if not text:
        raise BadDeck("Paste a lesson's link, like https://.../attention?sentence=the+cat+sat&step=2.")
    if len(text) > LINK_CHARS:
        raise BadDeck(f"That link is {len(text):,} characters long; a deck keeps links of up to {LINK_CHARS:,}.")
    parts = urlsplit(text if "://" in text or text.startswith("/") else "/" + text)
    lesson = parts.path.rstrip("/").rsplit("/", 1)[-1]
    if not _LESSON.fullmatch(lesson):
        raise BadDeck("That link names no lesson: its address should end in a lesson's name, like /attention.")
    params = {}
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        if name in DECK_PARAMS or name == "lecture":
            continue
        params[name] = int(value) if re.fullmatch(r"-?\d{1,9}", value) else value
    try:
        return ViewStep(lesson, _params(params))
    except ValueError as err:
        raise BadDeck(f"That link: {err}") from None


def step_title(
    s: Step,
    lesson_titles: Mapping[str, str] | None = None,
    known: Known | None = None,
    prediction_titles: Mapping[str, str] | None = None,
) -> str:
    """One line for a step, as the builder and the presenter's bar list it. prediction_titles: a room question's
    title by its key (the question a lecturer reads), where the app knows it; else the key."""
    titles = lesson_titles or {}
    if s.note:
        return s.note
    if isinstance(s, ViewStep):
        sentence = s.params.get("sentence")
        on = f" on “{sentence}”" if isinstance(sentence, str) and sentence else ""
        return f"{titles.get(s.lesson, s.lesson)}, step {s.step + 1}{on}"
    if isinstance(s, PredictionStep):
        return f"{(prediction_titles or {}).get(s.key, f'Prediction {s.key}')} on “{s.sentence}”"
    if isinstance(s, QuizStep):
        return f"Quiz question {s.question_id}"
    first = s.prompt.splitlines()[0] if s.prompt else ""
    return f"Question: {first[:80]}"


def parse_deck_id(raw: object) -> str | None:
    text = str(raw or "").strip().lower()
    return text if _ID.fullmatch(text) else None


# ------------------------------------------------------------------ in the store


class SavedDecks:
    """The decks' half of RoomStore: it supplies self._run and self._insert_for."""

    def save_deck(self, deck: Deck, now: datetime | None = None) -> str:
        """Keep the deck; its id (the same for the same deck: saving twice keeps one row)."""
        deck_id, body = deck.id, json.dumps(deck.to_dict(), ensure_ascii=False)
        now = now or datetime.now(UTC)
        self._run(
            lambda conn: conn.execute(
                self._insert_for(decks)
                .values(id=deck_id, title=deck.title, body=body, created_at=now)
                .on_conflict_do_nothing()
            )
        )
        return deck_id

    def load_deck(self, deck_id: str) -> Deck | None:
        """The deck a link names, or None. A stored deck was checked when saved; its steps are read again
        (problems() flags those naming what the app no longer has)."""
        body = self._run(lambda conn: conn.execute(select(decks.c.body).where(decks.c.id == deck_id)).scalar())
        return parse(body) if body is not None else None
