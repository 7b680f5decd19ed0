"""The rule cases the differential tests play, generated from the rule declaration.

:func:`single_cases`: every option of :data:`allfives_env.game.rules.OPTIONS` with every value it
declares (a choice's allowed values, an integer option's ``examples``), each alone (only that
option and the seat count overridden), with 2, 3 and 4 seats where the combination is legal:
on the presets taken in turn (the fast set) or on every preset (``full``, the slow sweep).
:func:`mixed_cases`: a fixed number of seeded random mixes of declared values, the seat counts
in turn. A value declared in ``rules.py`` therefore gets cases at once, and they fail until
both engines implement it; a declared value that no preset and seat count allows raises here.
"""

from __future__ import annotations

import random
from typing import Any

from allfives_env.game.rules import OPTIONS, PRESETS, RulesError, make_rules

Case = tuple[str, dict[str, Any]]  # (preset, overrides)
SEAT_COUNTS = (2, 3, 4)


def legal(preset: str, overrides: dict[str, Any]) -> bool:
    """Whether ``make_rules(preset, **overrides)`` is a legal rule set."""
    try:
        make_rules(preset, **overrides)
    except RulesError:
        return False
    return True


def single_cases(full: bool = False) -> list[Case]:
    """Each option x each declared value x each seat count where legal (see the module)."""
    presets = sorted(PRESETS)
    cases: list[Case] = []
    for name, option in OPTIONS.items():
        for value in option.tested:
            found = 0
            for players in SEAT_COUNTS:
                if name == "players" and value != players:
                    continue
                turn = len(cases) % len(presets)  # the fast set starts at another preset
                for preset in presets[turn:] + presets[:turn]:
                    overrides = {"players": players, name: value}
                    if legal(preset, overrides):
                        cases.append((preset, overrides))
                        found += 1
                        if not full:
                            break
            if not found:
                raise AssertionError(f"{name}={value!r}: no preset and seat count allows it; "
                                     "give an example that some preset allows")
    return cases


def mixed_cases(count: int, seed: int) -> list[Case]:
    """``count`` legal random mixes (about half the options set to a declared value each),
    seeded, with 2, 3 and 4 seats in turn."""
    rng = random.Random(seed)
    presets = sorted(PRESETS)
    cases: list[Case] = []
    for _ in range(200 * count):
        if len(cases) == count:
            return cases
        overrides: dict[str, Any] = {"players": SEAT_COUNTS[len(cases) % len(SEAT_COUNTS)]}
        overrides.update((name, rng.choice(option.tested)) for name, option in OPTIONS.items()
                         if name != "players" and rng.random() < 0.5)
        preset = rng.choice(presets)
        if legal(preset, overrides):
            cases.append((preset, overrides))
    raise AssertionError(f"found {len(cases)} legal mixes of {count} in {200 * count} draws")


def case_id(case: Case) -> str:
    """A short test id: ``five_up-players=3-rounding=total``."""
    preset, overrides = case
    return "-".join([preset, *(f"{k}={v}" for k, v in overrides.items())])
