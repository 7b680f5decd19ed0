"""Everything ``allfives train`` can check before it starts working, checked at once.

A wrong ``ckpt:`` seat count among the opponents, an unreadable ``--bc-data`` or an
``--init-from`` checkpoint made for another table would otherwise surface only after the
warm start (minutes), or not at all. :func:`preflight` raises one ``ValueError`` line instead,
before the run directory is touched.
"""

from __future__ import annotations

from allfives_agents.base import make_agent
from allfives_agents.trained.checkpoint import check_table, read_card, resolve_checkpoint
from allfives_env.game.rules import Rules
from allfives_train.config import EVALUATION, POOL, TrainConfig
from allfives_train.games.opponents import SELF, SNAPSHOTS


def require_sb3() -> None:
    """A one-line install hint, not a traceback, when the ``train`` extra is missing."""
    try:
        import sb3_contrib  # noqa: F401
        import stable_baselines3  # noqa: F401
        import torch  # noqa: F401
    except ImportError as exc:
        name = exc.name or str(exc)
        raise ValueError(f"allfives train needs PyTorch, Stable-Baselines3 and sb3-contrib, "
                         f"and {name} is not installed: pip install -c constraints.txt -e "
                         "'.[train]'") from None


def agent_fields(cfg: TrainConfig, rules: Rules,
                 extra: tuple[tuple[str, str], ...] = ()) -> list[tuple[str, str]]:
    """(field, agent id) of every agent the run will build: the pool's, the evaluations',
    and an algo's own ``extra`` (maskable_ppo's warm-start teacher)."""
    pool = cfg.section(POOL)
    out = [("opponents", str(e["agent"])) for e in pool.opponents
           if e["agent"] not in (SELF, SNAPSHOTS)]
    out += [("eval_opponents", str(i)) for i in cfg.section(EVALUATION).opponents]
    if rules.teams and pool.partner != SELF:
        out.append(("partner", str(pool.partner)))
    return out + list(extra)


def check_agents(cfg: TrainConfig, rules: Rules,
                 extra: tuple[tuple[str, str], ...] = ()) -> None:
    """Build every agent once and check a checkpoint's seat count and teams."""
    for field, agent_id in dict.fromkeys(agent_fields(cfg, rules, extra)):
        try:
            card = getattr(make_agent(agent_id, 0), "card", None)
            if card is not None:
                check_table(card, rules, agent_id)
        except ValueError as exc:
            raise ValueError(f"config {field} {agent_id!r}: {exc}") from None


def check_init_from(cfg: TrainConfig, rules: Rules) -> None:
    ref = str(cfg.init_from)
    try:
        directory = resolve_checkpoint(ref)
        card = read_card(directory)
        check_table(card, rules, repr(ref))
    except ValueError as exc:
        raise ValueError(f"config init_from {ref!r}: {exc}") from None
    if not (directory / "model.zip").is_file():
        raise ValueError(f"config init_from {ref!r}: the checkpoint has no model.zip to start "
                         "from")
    hidden = list(card.get("policy", {}).get("hidden", []))
    if hidden and hidden != list(cfg.net_arch):
        raise ValueError(f"config init_from {ref!r}: its network has hidden layers {hidden}, "
                         f"this run's net_arch is {list(cfg.net_arch)}: give --net-arch "
                         f"{' '.join(map(str, hidden))}")


def check_batched_opponents(cfg: TrainConfig, rules: Rules) -> None:
    """On the batched engine (``engine: batched``, or ``auto`` with numba installed), every
    opponent and a partner must have a batched version (:func:`make_batched_bot`)."""
    if cfg.engine == "scalar":
        return
    try:
        from allfives_agents.batched.bots import make_batched_bot
        from allfives_agents.levels import naming_model
        from allfives_env.batched_engine.games import kernels

        kernels()
    except (ImportError, RuntimeError):  # no numba: make_vector_env says what to do
        return
    fields = [(f, i) for f, i in agent_fields(cfg, rules) if f in ("opponents", "partner")]
    for field, agent_id in dict.fromkeys(fields):
        try:
            make_batched_bot(naming_model(agent_id, rules), 0)  # ckpt:best: for these rules
        except ValueError as exc:
            raise ValueError(f"config {field}: {exc}") from None


def check_retention(cfg: TrainConfig) -> None:
    """``keep_snapshots``: a count of snapshot files, 0 for all."""
    keep = cfg.section(POOL).keep_snapshots
    if not isinstance(keep, int) or keep < 0:
        raise ValueError(f"config keep_snapshots: {keep!r} is not allowed; give "
                         "a whole number of snapshot files to keep, or 0 to keep every one")


def fast_preflight(cfg: TrainConfig, rules: Rules) -> None:
    """:func:`preflight` for the fast path (``ppo_batched``, ``dmc``): the agents and the
    batched opponents, before the run directory is touched (``init_from`` is checked with
    the config)."""
    check_agents(cfg, rules)
    check_batched_opponents(cfg, rules)
    check_retention(cfg)


def preflight(cfg: TrainConfig, rules: Rules, extra: tuple[tuple[str, str], ...] = ()) -> None:
    """Check the whole run's inputs: every agent (with the algo's ``extra`` ones), the
    retention and ``init_from``."""
    check_agents(cfg, rules, extra)
    check_retention(cfg)
    if cfg.init_from:
        check_init_from(cfg, rules)
