"""What the batched engine encodes of the rules, and the encoder (no numba needed).

:data:`ENCODED` declares, for every rule option of :data:`allfives_env.game.rules.OPTIONS`, what
the kernels (:mod:`allfives_env.batched_engine.kernels`) implement: a choice maps each value they
implement to the code they read; an integer option gives the range it stores (inclusive).
:func:`encode` refuses anything else with one ``RulesError`` (a ``ValueError``) line naming
the option and the value, so a value declared in ``rules.py`` but not implemented here never
reaches the kernels. A new value: a code here, its behaviour in the kernels, and the
generated differential cases (``tests/rule_cases.py``) check it against ``engine.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from allfives_env.game.rules import OPTIONS, Rules, RulesError
from allfives_env.game.tiles import N_TILES

LEADER_CODES = {"random": 0, "highest_double": 1, "hand_winner": 2}  # LEADER_* in kernels
_BOOL = {False: 0, True: 1}
INT32_MAX = 2**31 - 1

#: Option -> {value: code the kernels read} or (lowest, highest) stored. The kernels' ``R``
#: fields: ``K_IMMEDIATE`` is ``win_check`` (1: immediate), ``K_SUBTRACT`` is ``hand_end``
#: (1: subtract_own), ``K_ROUND_TOTAL`` is ``rounding`` (1: total).
ENCODED: dict[str, dict[Any, int] | tuple[int, int]] = {
    "players": {2: 2, 3: 3, 4: 4},
    "teams": _BOOL,
    "hand_size": (1, N_TILES),
    "target": (1, 10**9),  # scores are int32
    "win_check": {"end_of_hand": 0, "immediate": 1},
    "first_leader": LEADER_CODES,
    "next_leader": LEADER_CODES,
    "spinner": _BOOL,
    "hand_end": {"winner_collects": 0, "subtract_own": 1},
    "rounding": {"per_hand": 0, "total": 1},
    "boneyard_reserve": (0, N_TILES),
    "max_hands": (1, INT32_MAX),  # the hand index is int32
}


def encode_option(name: str, value: Any) -> int:
    """The code of ``value`` for rule option ``name``, or one ``RulesError`` line."""
    table = ENCODED.get(name)
    if table is None:
        raise RulesError(f"rule option {name!r}: the batched engine does not implement it "
                         "(allfives_env/batched_engine/rules.py); use the scalar engine")
    if isinstance(table, dict):
        # type first: True == 1 and 1 == True as dictionary keys
        found = [code for v, code in table.items() if type(v) is type(value) and v == value]
        if not found:
            raise RulesError(f"{name}={value!r}: the batched engine does not implement this "
                             f"value (it implements {', '.join(map(str, table))}); use the "
                             "scalar engine")
        return found[0]
    low, high = table
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        small = not isinstance(value, int) or abs(value) < 10**18  # no 5000-digit lines
        shown = f"{name}={value!r}" if small else f"{name} beyond 10**18"
        raise RulesError(f"{shown}: the batched engine stores {name} {low}..{high}; "
                         "use the scalar engine")
    return value


def encode(rules: Rules) -> dict[str, int]:
    """Every declared rule option of ``rules`` as the code the kernels read."""
    return {name: encode_option(name, getattr(rules, name)) for name in OPTIONS}


def rules_array(rules: Rules, log: bool, external: bool, autoreset: bool) -> np.ndarray:
    """The kernels' ``R`` array (fields ``batched_kernels.K_*``), or one ``RulesError``
    line for a rule value the batched engine does not implement."""
    c = encode(rules)
    return np.array([
        c["players"], c["teams"], rules.n_sides, c["hand_size"], c["target"], c["win_check"],
        c["first_leader"], c["next_leader"], c["spinner"], c["hand_end"], c["rounding"],
        c["boneyard_reserve"], c["max_hands"], log, external, autoreset], dtype=np.int64)
