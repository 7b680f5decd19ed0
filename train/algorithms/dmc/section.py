"""algo dmc's own config section (``dmc:`` in a config, flags ``--dmc-*``) and its checks."""

from __future__ import annotations

import dataclasses
from typing import Any

from allfives_train.algo_checks import a_later_stage
from allfives_train.sections import Section, require_number, section_of


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
    """The batched engine, a start, epsilon, scale, lambda. Its actor: ``action_features``
    (the default: action values from each move's features, registered or an action view's)
    or ``mlp`` (140 action values from the observation alone, the action's index its only
    encoding)."""
    if cfg.engine == "scalar":
        raise bad("engine", "algo dmc runs on the batched engine: set engine: auto or batched")
    a_later_stage(cfg, bad, "dmc", "init_from or feature_start")
    own = section_of(cfg, DMC)
    require_number(bad, "dmc_epsilon", own.epsilon, unit=True)
    require_number(bad, "dmc_scale", own.scale, unit=False)
    require_number(bad, "dmc_lambda", own.td_lambda, unit=True)
