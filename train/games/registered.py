"""The Gymnasium entry points of ``allfives/AllFives-v0`` (registered by ``import allfives_env``,
:mod:`allfives_env.envs.gym_ids`): the single-agent env and its vector version, made from a
preset, rule options and opponents given as agent ids::

    gymnasium.make("allfives/AllFives-v0", opponents=["heuristic", "level:easy"], players=2)
    gymnasium.make_vec("allfives/AllFives-v0", num_envs=64, opponents=["greedy"])   # numba

``opponents``: agent ids (equal weights) or ``{"agent": ID, "weight": w}`` entries, as in
training configs; default ``["greedy"]``. The env class's own keywords (``seed``,
``margin_reward``, ``win_reward``, ``partner``, ...) go to it, every other keyword is a rule
option (``players``, ``teams``, ``target``, ... as docs/rules.md).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from allfives_env.game.rules import Rules, make_rules

__all__ = ["opponent_entries", "single_agent_env", "vector_env"]


def opponent_entries(opponents: Sequence[str | dict[str, Any]] | str | None
                     ) -> list[dict[str, Any]] | None:
    """Agent ids and ``{"agent", "weight"}`` entries as entries (a one-line ValueError for
    anything else)."""
    if opponents is None:
        return None
    if isinstance(opponents, str):
        opponents = [opponents]
    out = []
    for item in opponents:
        if isinstance(item, str):
            out.append({"agent": item, "weight": 1.0})
        elif isinstance(item, dict) and isinstance(item.get("agent"), str):
            out.append(dict(item))
        else:
            raise ValueError(f"opponents: {item!r} is not an agent id or an entry "
                             "{'agent': ID, 'weight': w}")
    if not out:
        raise ValueError("opponents: give at least one agent id, e.g. ['heuristic']")
    return out


def _split(cls: type, preset: str, rules: Rules | None, options: dict[str, Any]
           ) -> tuple[Rules, dict[str, Any]]:
    """(the rules, ``cls``'s own keywords) from the keywords given."""
    own = set(inspect.signature(cls).parameters) - {"rules", "opponents"}
    env_options = {k: v for k, v in options.items() if k in own}
    rule_options = {k: v for k, v in options.items() if k not in own}
    if rules is None:
        return make_rules(preset, **rule_options), env_options
    if rule_options or preset != "all_fives":
        raise ValueError("give either rules=Rules(...) or a preset and rule options, not both")
    return rules, env_options


def single_agent_env(preset: str = "all_fives", *, rules: Rules | None = None,
                     opponents: Sequence[str | dict[str, Any]] | str | None = None,
                     **options: Any) -> Any:
    """:class:`allfives_train.games.single_agent.AllFivesSingleAgentEnv`."""
    from allfives_train.games.single_agent import AllFivesSingleAgentEnv

    rules, own = _split(AllFivesSingleAgentEnv, preset, rules, options)
    return AllFivesSingleAgentEnv(rules, opponents=opponent_entries(opponents), **own)


def vector_env(num_envs: int = 64, preset: str = "all_fives", *, rules: Rules | None = None,
               opponents: Sequence[str | dict[str, Any]] | str | None = None,
               **options: Any) -> Any:
    """:class:`allfives_train.games.vector_env.AllFivesVectorEnv` of ``num_envs`` games (numba)."""
    from allfives_train.games.vector_env import AllFivesVectorEnv

    rules, own = _split(AllFivesVectorEnv, preset, rules, options)
    return AllFivesVectorEnv(rules, num_envs=num_envs, opponents=opponent_entries(opponents),
                             **own)
