"""Each algo's own checks of its config (named by the algorithm table, train/algos.py, and
run by :func:`allfives_train.config.validate` after the checks every algo shares): each
``check_<algo>(cfg, bad)`` raises ``bad(field, what is allowed)`` for a value that algo does
not accept. Light: torch and the trainers are not imported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from allfives_train.configio import GAME_FIELDS, GameFields, load_dataclass, read_mapping

#: A :class:`allfives_train.config.TrainConfig` (not imported: the config imports this module).
TrainConfig = Any


def check_ppo_batched(cfg: TrainConfig, bad: Any) -> None:
    """The ppo_batched fields: no warm start, no start from a checkpoint."""
    for name in ("bc_teacher", "bc_data", "init_from"):
        if getattr(cfg, name):
            raise bad(name, "algo ppo_batched has no warm start: set it to null "
                            "(e.g. --bc-teacher null)")


def check_dmc(cfg: TrainConfig, bad: Any) -> None:
    """The dmc fields: the action_features actor on the batched engine, a start, epsilon."""
    if cfg.policy != "action_features" or cfg.engine == "scalar":
        raise bad("policy", "algo dmc trains the action_features actor on the batched engine: "
                            "set policy: action_features and engine: auto or batched")
    _a_later_stage(cfg, bad, "dmc", "init_from or feature_start")
    require_number(cfg, bad, "dmc_epsilon", unit=True)
    require_number(cfg, bad, "dmc_scale", unit=False)
    require_number(cfg, bad, "dmc_lambda", unit=True)


def require_number(cfg: TrainConfig, bad: Any, name: str, unit: bool) -> None:
    """Field ``name`` is a number (not a bool): in [0, 1] when ``unit``, else > 0."""
    value = getattr(cfg, name)
    ok = not isinstance(value, bool) and isinstance(value, (int, float))
    if unit and not (ok and 0 <= value <= 1):
        raise bad(name, "must be a number in [0, 1]")
    if not unit and not (ok and value > 0):
        raise bad(name, "must be a number > 0")


def _no_imitation(cfg: TrainConfig, bad: Any, algo: str, start: str) -> None:
    """``bc_teacher`` and ``bc_data`` unset: ``algo`` starts from ``start``, not imitation."""
    for name in ("bc_teacher", "bc_data"):
        if getattr(cfg, name):
            raise bad(name, f"algo {algo} has no imitation warm start (it starts from "
                            f"{start}): set it to null (e.g. --bc-teacher null)")


def _check_init_from(cfg: TrainConfig, bad: Any, algo: str) -> None:
    """``init_from``, when set: an action_features checkpoint of this game's table."""
    if not cfg.init_from:
        return
    from allfives_agents.trained.checkpoint import check_table, load_checkpoint
    from allfives_agents.trained.policy_numpy import ResidualPolicy

    _, card, policy = load_checkpoint(cfg.init_from)
    if not isinstance(policy, ResidualPolicy):
        raise bad("init_from", f"{algo} needs a checkpoint with an action_features actor "
                               "(policy: action_features)")
    check_table(card, cfg.game().rules, repr(cfg.init_from))


def _a_later_stage(cfg: TrainConfig, bad: Any, algo: str, start: str) -> None:
    """A stage that starts from a network (``start``), never from imitation."""
    _no_imitation(cfg, bad, algo, start)
    _check_init_from(cfg, bad, algo)


def check_distill(cfg: TrainConfig, bad: Any) -> None:
    """The search_distill fields (the teacher is built once, to check its id)."""
    if cfg.policy != "action_features":
        raise bad("policy", "algo search_distill fits the action_features actor: set "
                            "policy: action_features")
    _a_later_stage(cfg, bad, "search_distill", "init_from")
    require_number(cfg, bad, "distill_mix", unit=True)
    require_number(cfg, bad, "distill_temperature", unit=False)
    if not isinstance(cfg.distill_teacher, str):
        raise bad("distill_teacher", "must be a search agent id, e.g. search:sims=256,depth=2")
    from allfives_train.algorithms.search_distill.label import label_engine, make_teacher

    try:
        make_teacher(cfg.distill_teacher)
    except ValueError as exc:
        raise bad("distill_teacher", str(exc)) from None
    try:
        label_engine(cfg.distill_teacher, cfg.engine)
    except ValueError as exc:
        raise bad("engine", str(exc)) from None
    _validate_extra_labels(cfg, bad)


def _validate_extra_labels(cfg: TrainConfig, bad: Any) -> None:
    """Each ``distill_extra_labels`` folder: readable shards of a run of the same rules."""
    from allfives_train.algorithms.search_distill.label import extra_shards

    folders = cfg.distill_extra_labels
    if not isinstance(folders, list) or not all(isinstance(f, str) for f in folders):
        raise bad("distill_extra_labels", "must be a list of label folders "
                                          "(a search_distill run's run_dir/labels)")
    for folder in folders:
        run_config = Path(folder).parent / "config.yaml"
        try:
            extra_shards(folder)
            other = _rules_of(run_config)
        except (OSError, ValueError) as exc:
            raise bad("distill_extra_labels", f"{folder}: {exc}") from None
        if other != cfg.game().rules:
            raise bad("distill_extra_labels", f"{folder} holds positions of other rules "
                                              f"({run_config}): {other}")


def _rules_of(run_config: Path) -> Any:
    """The rules of the run whose ``config.yaml`` is ``run_config`` (its game fields)."""
    values = read_mapping(run_config, str(run_config))
    game = {k: v for k, v in values.items() if k in GAME_FIELDS}
    return load_dataclass(GameFields, None, game, str(run_config)).game().rules
