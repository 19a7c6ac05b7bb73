"""Room codes, lecturer keys, browser ids and the guessing limit: what they accept and the figure quoted."""

from __future__ import annotations

import math

from classroom import codes, limits
from classroom.codes import parse_code, parse_student_id


def test_codes_are_drawn_from_the_alphabet_and_read_back_however_typed():
    drawn = {codes.new_code() for _ in range(200)}
    assert len(drawn) == 200 and all(parse_code(c) == c for c in drawn)
    code = next(iter(drawn))
    assert parse_code(codes.shown_code(code).lower()) == code and parse_code(f" {code[:4]} {code[4:]} ") == code
    assert codes.shown_code("ABCDEFGH") == "ABCD-EFGH"


def test_bad_codes_are_refused():
    for raw in [None, 42, "", "ABCDEFG", "ABCDEFGHJ", "ABCDEFG0", "ABCDEFGI", "<script>", "A" * 1000, "ÄBCDEFGH"]:
        assert parse_code(raw) is None, raw


def test_the_code_space_and_the_daily_guessing_chance_are_the_ones_quoted():
    assert len(set(codes.ALPHABET)) == 31 and not set("0O1IL") & set(codes.ALPHABET)
    assert codes.CODE_SPACE == 31**8 and math.isclose(codes.CODE_SPACE, 8.53e11, rel_tol=1e-3)
    # 600 failed guesses a minute for a day against 100 open rooms: about 1e-4
    chance = limits.day_hit_chance(100, limits.PER_PROCESS)
    assert math.isclose(chance, 600 * 60 * 24 * 100 / 31**8, rel_tol=1e-3) and 0.9e-4 < chance < 1.1e-4


def test_lecturer_keys_match_only_themselves():
    key = codes.new_lecturer_key()
    stored = codes.key_hash(key)
    assert codes.key_matches(key, stored)
    assert not codes.key_matches(codes.new_lecturer_key(), stored)
    assert not codes.key_matches(stored, stored) and not codes.key_matches(None, stored)
    assert not codes.key_matches(key + "x", stored)


def test_student_ids_are_32_hex_digits_or_nothing():
    sid = codes.new_student_id()
    assert parse_student_id(sid) == sid
    for raw in [None, "", sid.upper(), sid[:-1], sid + "0", "g" * 32, "'; --" + "0" * 27]:
        assert parse_student_id(raw) is None


def test_the_limiter_stops_a_session_an_address_then_everyone_and_forgets_after_a_minute():
    limiter = limits.GuessLimiter(per_session=3, per_address=4, per_process=6, window_s=60)
    for _ in range(3):
        assert limiter.allowed("a", "ip1", now=0)
        limiter.failed("a", "ip1", now=0)
    assert not limiter.allowed("a", "ip1", now=1) and not limiter.allowed("a", "ip2", now=1)
    assert limiter.allowed("b", "ip1", now=1)  # another session at the same address
    limiter.failed("b", "ip1", now=1)
    assert not limiter.allowed("c", "ip1", now=2) and limiter.allowed("c", "ip2", now=2)  # the address is full
    limiter.failed("c", "ip2", now=2)
    limiter.failed("d", None, now=3)
    assert not limiter.allowed("e", "ip3", now=4)  # the process's limit, whoever asks
    assert limiter.allowed("a", "ip1", now=61) and limiter.allowed("e", "ip3", now=64)
