"""The rule declaration (``rules.OPTIONS``) against what each engine implements.

The issue's "done when": declaring a new value for an existing rule option without
implementing it in the batched engine makes the test suite fail. The batched engine refuses
the value by name, and the generated differential cases (``tests/rule_cases.py``) contain it.
"""

from __future__ import annotations

import dataclasses

import pytest
from rule_cases import legal, mixed_cases, single_cases

from allfives.cli import main
from allfives_env.batched_engine.games import BatchedGames
from allfives_env.batched_engine.rules import ENCODED, encode_option
from allfives_env.game import engine
from allfives_env.game.observation import COLLECTS
from allfives_env.game.rules import (
    IMMEDIATE_WIN,
    OPTION_NAMES,
    OPTIONS,
    PRESETS,
    Rules,
    RulesError,
    make_rules,
)


def test_declaration_is_the_rules_fields_and_defaults() -> None:
    fields = [f.name for f in dataclasses.fields(Rules) if f.name != "preset"]
    assert list(OPTION_NAMES) == fields == list(OPTIONS)
    assert Rules() == make_rules("all_fives", players=2)  # the defaults: all_fives, 2 seats
    for preset, values in PRESETS.items():
        assert set(values) == set(OPTIONS) - {"players", "teams"}, preset


def test_every_option_has_values_to_test() -> None:
    for name, option in OPTIONS.items():
        assert option.tested, name
        for value in option.tested:
            assert type(value) is option.kind, (name, value)
            assert value >= option.minimum if option.kind is int else True, (name, value)


def test_batched_engine_encodes_every_declared_value() -> None:
    assert list(ENCODED) == list(OPTIONS)
    for name, option in OPTIONS.items():
        codes = [encode_option(name, value) for value in option.tested]
        table = ENCODED[name]
        if isinstance(table, dict):
            assert len(set(codes)) == len(codes), name  # every value its own code
        else:
            assert table[0] <= option.minimum, name


def test_scalar_engine_tables_cover_declared_values() -> None:
    for name in ("first_leader", "next_leader"):
        assert set(OPTIONS[name].values) <= set(engine._LEADERS), name
    assert set(engine._DOMINO_POINTS) == set(OPTIONS["hand_end"].values)
    assert set(engine._BLOCKED) == set(OPTIONS["hand_end"].values)
    assert set(engine._ROUNDING) == set(OPTIONS["rounding"].values)
    assert set(IMMEDIATE_WIN) == set(OPTIONS["win_check"].values)
    assert set(COLLECTS) == set(OPTIONS["hand_end"].values)  # the observation's flag


@pytest.fixture
def exact_rounding(monkeypatch: pytest.MonkeyPatch) -> None:
    """``rounding: exact`` declared in rules.py, implemented by neither engine."""
    rounding = OPTIONS["rounding"]
    monkeypatch.setitem(OPTIONS, "rounding",
                        dataclasses.replace(rounding, values=(*rounding.values, "exact")))


@pytest.mark.usefixtures("exact_rounding")
def test_new_value_is_refused_by_the_batched_engine_by_name() -> None:
    rules = make_rules("pagat", rounding="exact")  # declared, so the rules accept it
    with pytest.raises(ValueError, match=r"^rounding='exact': the batched engine does not "
                                         r"implement this value \(it implements per_hand, "
                                         r"total\)") as info:
        BatchedGames(rules, 2)
    assert "\n" not in str(info.value)
    with pytest.raises(RulesError, match="rounding='exact'"):  # the check above fails too
        test_batched_engine_encodes_every_declared_value()


@pytest.mark.usefixtures("exact_rounding")
def test_new_value_gets_generated_differential_cases() -> None:
    cases = [c for c in single_cases() if c[1].get("rounding") == "exact"]
    assert sorted(o["players"] for _, o in cases) == [2, 3, 4]
    full = [c for c in single_cases(full=True) if c[1].get("rounding") == "exact"]
    assert len(full) == 3 * len(PRESETS)
    mixes = mixed_cases(40, seed=1)
    assert any(o.get("rounding") == "exact" for _, o in mixes)


@pytest.mark.usefixtures("exact_rounding")
def test_new_value_fails_the_differential_test() -> None:
    """The generated case itself fails: what the suite would report."""
    diff = pytest.importorskip("test_batched_diff")
    case = next(c for c in single_cases() if c[1].get("rounding") == "exact")
    with pytest.raises(ValueError, match="rounding='exact'"):
        diff.test_rule_variants(case)


def test_undeclared_value_is_refused_by_the_rules() -> None:
    with pytest.raises(RulesError, match="rounding='exact': allowed values are per_hand, total"):
        make_rules("pagat", rounding="exact")


def test_batched_refuses_an_integer_it_cannot_store(capsys: pytest.CaptureFixture) -> None:
    """Through the CLI: one line, exit status 2, the option and the range named."""
    code = main(["simulate", "--engine", "batched", "--games", "1", "--no-progress",
                 "--set", "target=2000000000"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines() == [
        "allfives simulate: error: target=2000000000: the batched engine stores target "
        "1..1000000000; use the scalar engine"]


def test_openspiel_parameters_come_from_the_declaration() -> None:
    openspiel = pytest.importorskip("allfives_env.spiel.openspiel")
    assert set(openspiel.PARAMETERS) == set(OPTIONS) | {"preset", "reward"}
    rules, _ = openspiel.rules_from_params({"preset": "pagat", "players": 3})
    assert rules == make_rules("pagat", players=3)  # defaults: the preset's values
    for name, option in OPTIONS.items():
        for value in option.tested:
            overrides = {"players": 4, name: value}
            if name != "players" and legal("five_up", overrides):
                rules, _ = openspiel.rules_from_params({"preset": "five_up", **overrides})
                assert getattr(rules, name) == value, name


@pytest.mark.parametrize("name,high", [("target", 10**9), ("max_hands", 2**31 - 1)])
def test_batched_integer_bounds(name: str, high: int) -> None:
    assert encode_option(name, high) == high
    with pytest.raises(RulesError, match=rf"^{name}={high + 1}: the batched engine stores "
                                         rf"{name} 1\.\.{high}; use the scalar engine$"):
        encode_option(name, high + 1)
    with pytest.raises(RulesError, match=rf"^{name} beyond 10\*\*18: "):
        encode_option(name, 10**5000)
