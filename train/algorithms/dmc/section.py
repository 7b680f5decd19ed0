"""algo dmc's own config section (``dmc:`` in a config, flags ``--dmc-*``) and its checks."""

from __future__ import annotations

import dataclasses
from typing import Any

from allfives_train.algo_checks import a_later_stage
from allfives_train.sections import ACTOR, Section, require_number, section_of


@dataclasses.dataclass
class DMCSection:
    """Deep Monte-Carlo: the actor's logits read as action values, regressed on returns."""

    epsilon: float = 0.05
    """Share of the learner's moves played uniformly at random among the legal ones (the
    others are the argmax of its action values)."""
    scale: float = 0.02
    """Return units per unit of logit in the action values: ``Q(s, a) = V(s) + scale *
    (logit[a] - mean legal logit)`` (a search_distill actor's logits are points; with
    ``margin_reward`` 1 a point is 1 / target of return)."""
    td_lambda: float = 1.0
    """The lambda of the lambda-return the action values are regressed on, in [0, 1]: 1 is
    Monte-Carlo (the discounted return to the game's end, bootstrapped from ``V`` only where
    a rollout cuts a game); less mixes in ``V`` of the states that follow, trading the noise
    of later hands for the critic's bias (0: one step, ``r + gamma V(s')``)."""


DMC = Section("dmc", DMCSection, "Deep Monte-Carlo's exploration, scale and lambda",
              prefix="dmc_", renamed=(("td_lambda", "dmc_lambda"),))


def check(cfg: Any, bad: Any) -> None:
    """The action_features actor on the batched engine, a start, epsilon, scale, lambda."""
    if section_of(cfg, ACTOR).policy != "action_features" or cfg.engine == "scalar":
        raise bad("policy", "algo dmc trains the action_features actor on the batched engine: "
                            "set policy: action_features and engine: auto or batched")
    a_later_stage(cfg, bad, "dmc", "init_from or feature_start")
    own = section_of(cfg, DMC)
    require_number(bad, "dmc_epsilon", own.epsilon, unit=True)
    require_number(bad, "dmc_scale", own.scale, unit=False)
    require_number(bad, "dmc_lambda", own.td_lambda, unit=True)
