"""Rule presets, their YAML files, the three ways to override, and refusals of bad input."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from allfives_env.game.rules import (
    OPTION_NAMES,
    PRESETS,
    Rules,
    RulesError,
    load_rules_yaml,
    make_rules,
    parse_overrides,
    rules_from_dict,
)

RULES_DIR = Path(__file__).resolve().parent.parent / "configs" / "rules"

# The presets table of docs/rules.md, written out independently of rules.PRESETS:
# hand_size and target per 2/3/4 players, first and next leader, hand_end, rounding.
TABLE: dict[str, tuple[tuple[int, ...], tuple[int, ...], str, str, str, str]] = {
    "all_fives": ((9, 7, 5), (250, 200, 200), "random", "hand_winner", "subtract_own",
                  "per_hand"),
    "five_up": ((7, 6, 5), (150, 150, 150), "highest_double", "highest_double",
                "winner_collects", "per_hand"),
    "muggins": ((7, 7, 7), (100, 100, 100), "highest_double", "hand_winner",
                "winner_collects", "per_hand"),
    "pagat": ((9, 7, 5), (250, 200, 200), "random", "hand_winner", "winner_collects",
              "total"),
}


@pytest.mark.parametrize("preset", sorted(TABLE))
@pytest.mark.parametrize("players", [2, 3, 4])
def test_presets_match_the_rules_table(preset: str, players: int) -> None:
    sizes, targets, first, nxt, hand_end, rounding = TABLE[preset]
    r = make_rules(preset, players=players)
    assert (r.hand_size, r.target) == (sizes[players - 2], targets[players - 2])
    assert (r.first_leader, r.next_leader, r.hand_end) == (first, nxt, hand_end)
    assert r.rounding == rounding
    assert r.spinner is True and r.win_check == "immediate" and r.boneyard_reserve == 0
    assert r.teams is (players == 4)
    assert r.n_sides == (2 if players == 4 else players)
    assert r.preset == preset


def test_every_preset_has_a_yaml_file() -> None:
    assert {p.stem for p in RULES_DIR.glob("*.yaml")} == set(PRESETS) == set(TABLE)


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("players", [2, 3, 4])
def test_yaml_resolves_to_the_preset(preset: str, players: int) -> None:
    options = load_rules_yaml(RULES_DIR / f"{preset}.yaml")
    assert options["preset"] == preset
    assert set(options) - {"preset"} <= set(OPTION_NAMES)
    assert make_rules(**options, players=players) == make_rules(preset, players=players)


def test_default_rules() -> None:
    r = make_rules()
    assert r.preset == "all_fives" and r.players == 2 and r.hand_size == 9 and r.target == 250


def test_three_ways_to_override_agree() -> None:
    by_kwargs = make_rules("five_up", players=4, teams=False, target=300, hand_size=6,
                           win_check="end_of_hand", spinner=False)
    by_cli = make_rules("five_up", **parse_overrides([
        "players=4", "teams=false", "target=300", "hand_size=6", "win_check=end_of_hand",
        "spinner=no"]))
    assert by_cli == by_kwargs
    assert by_kwargs.teams is False and by_kwargs.n_sides == 4


def test_yaml_overrides(tmp_path: Path) -> None:
    path = tmp_path / "house.yaml"
    path.write_text("preset: muggins\nplayers: 3\ntarget: 250\nhand_size: {3: 5}\n"
                    "boneyard_reserve: 2\n")
    r = make_rules(**load_rules_yaml(path))
    assert (r.preset, r.players, r.target, r.hand_size, r.boneyard_reserve) == (
        "muggins", 3, 250, 5, 2)
    assert r.first_leader == "highest_double"  # the rest is the preset's


def test_map_values_take_string_keys() -> None:
    assert make_rules(hand_size={"2": 4, "3": 3}, players=3).hand_size == 3


def test_to_dict_round_trips() -> None:
    r = make_rules("pagat", players=4, teams=False, boneyard_reserve=3)
    d = r.to_dict()
    assert list(d) == list(OPTION_NAMES)
    assert rules_from_dict({**d, "preset": "pagat"}) == r
    assert rules_from_dict(d).to_dict() == d


def test_presets_are_not_changed_by_overrides() -> None:
    before = copy.deepcopy(PRESETS)
    make_rules("five_up", target=999, hand_size={2: 3})
    with pytest.raises(RulesError):
        make_rules("five_up", target="lots")
    assert PRESETS == before


def test_rules_are_frozen() -> None:
    r = make_rules()
    with pytest.raises(AttributeError):
        r.target = 5  # type: ignore[misc]
    assert isinstance(r, Rules)


# ------------------------------------------------------------------ refusals
# (overrides, words the message must contain: the key and what is allowed)
BAD: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
    ("unknown key", {"targt": 100}, ("targt", "target", "hand_size")),
    ("bool for int", {"hand_size": True}, ("hand_size", "integer")),
    ("string for int", {"target": "lots"}, ("target", "integer")),
    ("float for int", {"target": 150.5}, ("target", "integer")),
    ("string for bool", {"spinner": "yes"}, ("spinner", "true or false")),
    ("string for bool, teams", {"players": 4, "teams": "false"}, ("teams", "true or false")),
    ("teams with 3 seats", {"players": 3, "teams": True}, ("teams", "players=4", "players=3")),
    ("teams with 2 seats", {"teams": True}, ("teams", "players=4")),
    ("too many seats", {"players": 5}, ("players", "2, 3 or 4")),
    ("too many tiles", {"players": 3, "hand_size": 10}, ("hand_size", "28")),
    ("reserve too big", {"players": 4, "hand_size": 5, "boneyard_reserve": 9},
     ("boneyard_reserve", "28")),
    ("negative reserve", {"boneyard_reserve": -1}, ("boneyard_reserve", ">= 0")),
    ("zero hand", {"hand_size": 0}, ("hand_size", ">= 1")),
    ("zero target", {"target": 0}, ("target", ">= 1")),
    ("zero max_hands", {"max_hands": 0}, ("max_hands", ">= 1")),
    ("bad enum", {"win_check": "sometimes"}, ("win_check", "immediate", "end_of_hand")),
    ("bad enum, leader", {"first_leader": "hand_winner"},
     ("first_leader", "random", "highest_double")),
    ("bad enum, hand_end", {"hand_end": "collect"}, ("hand_end", "winner_collects")),
    ("bad enum, rounding", {"rounding": "up"}, ("rounding", "per_hand", "total")),
    ("bad map key", {"hand_size": {5: 3}}, ("hand_size", "2, 3 or 4")),
    ("map without the seat count", {"players": 3, "target": {2: 100}},
     ("target", "players=3")),
    ("bad map value", {"hand_size": {2: "x"}}, ("hand_size", "integer")),
]


@pytest.mark.parametrize(("overrides", "words"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_rules_are_refused(overrides: dict[str, Any], words: tuple[str, ...]) -> None:
    with pytest.raises(RulesError) as info:
        make_rules("all_fives", **overrides)
    for word in words:
        assert word in str(info.value)


def test_unknown_preset() -> None:
    with pytest.raises(RulesError, match="presets are all_fives, five_up, muggins, pagat"):
        make_rules("fives")


@pytest.mark.parametrize(("items", "words"), [
    (["targt=100"], ("targt", "target")),
    (["target"], ("target", "key=value")),
    (["=5"], ("key=value",)),
    (["teams=maybe", "players=4"], ("teams", "true or false")),
])
def test_bad_command_line_overrides(items: list[str], words: tuple[str, ...]) -> None:
    with pytest.raises(RulesError) as info:
        make_rules(**parse_overrides(items))
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize(("text", "words"), [
    ("preset: all_fives\ntarget: [1, 2\n", ("not valid YAML",)),
    ("- preset\n- all_fives\n", ("mapping",)),
    ("preset: all_fives\nspiner: true\n", ("spiner", "spinner")),
    ("preset: all_fives\nhand_size: nine\n", ("hand_size", "integer")),
])
def test_bad_yaml_files(tmp_path: Path, text: str, words: tuple[str, ...]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(RulesError) as info:
        make_rules(**load_rules_yaml(path))
    for word in words:
        assert word in str(info.value)


def test_missing_yaml_file(tmp_path: Path) -> None:
    with pytest.raises(RulesError, match="cannot read it"):  # one line, as every bad input
        load_rules_yaml(tmp_path / "nope.yaml")
