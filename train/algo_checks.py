"""What the algorithms' own checks of a config share (each algo's check is named by its row
of the algorithm table, train/algos.py, and lives in its room: ``check(cfg, bad)`` raising
``bad(field, what is allowed)``; run by :func:`allfives_train.config.validate` after the
checks every algo shares), and ppo_batched's check. Light: torch and the trainers are not
imported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from allfives_train.algorithms.maskable_ppo.section import no_imitation
from allfives_train.configio import GAME_FIELDS, GameFields, load_dataclass, read_mapping
from allfives_train.sections import ACTOR, section_of

#: A :class:`allfives_train.config.TrainConfig` (not imported: the config imports this module).
TrainConfig = Any


def check_ppo_batched(cfg: TrainConfig, bad: Any) -> None:
    """ppo_batched starts at random (no start from a checkpoint); its action_features actor
    needs the batched engine."""
    no_imitation(cfg, bad, "ppo_batched", "random weights")
    if cfg.init_from:
        raise bad("init_from", "algo ppo_batched has no warm start: set it to null")
    if section_of(cfg, ACTOR).policy == "action_features" and cfg.engine == "scalar":
        raise bad("policy", "action_features needs algo ppo_batched on the batched engine, "
                            "or algo search_distill or dmc")


def check_actor_init_from(cfg: TrainConfig, bad: Any, algo: str) -> None:
    """``init_from``, when set: an action_features checkpoint of this game's table, reading
    what the config's ``action_view`` says."""
    if not cfg.init_from:
        return
    from allfives_agents.trained.checkpoint import check_table, load_checkpoint
    from allfives_agents.trained.policy_numpy import ResidualPolicy

    _, card, policy = load_checkpoint(cfg.init_from)
    if not isinstance(policy, ResidualPolicy):
        raise bad("init_from", f"{algo} needs a checkpoint with an action_features actor "
                               "(policy: action_features)")
    check_table(card, cfg.game().rules, repr(cfg.init_from))
    view = getattr(policy, "action_view", None)
    if view != section_of(cfg, ACTOR).action_view:
        reads = f"action view {view}" if view else "the registered features"
        raise bad("init_from", f"its actor reads {reads}: set action_view to "
                               f"{view or 'null'} or start from another checkpoint")


def a_later_stage(cfg: TrainConfig, bad: Any, algo: str, start: str) -> None:
    """A stage that starts from a network (``start``; ``init_from`` checked when set)."""
    no_imitation(cfg, bad, algo, start)
    check_actor_init_from(cfg, bad, algo)


def rules_of(run_config: Path) -> Any:
    """The rules of the run whose ``config.yaml`` is ``run_config`` (its game fields)."""
    values = read_mapping(run_config, str(run_config))
    game = {k: v for k, v in values.items() if k in GAME_FIELDS}
    return load_dataclass(GameFields, None, game, str(run_config)).game().rules
