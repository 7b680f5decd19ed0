"""The training configuration: the fields every algorithm shares, one docstring per field,
plus the sections of the algorithm table (train/sections.py, train/algos.py).

A run is configured by a YAML file in ``configs/train/`` (any subset of the fields, each
section under its key: ``dmc: {epsilon: 0.1}``) and command-line overrides
(``--total-steps 50000``, ``--dmc-epsilon 0.1``: every field's flag is its flat name). Every
field has a default, so ``allfives train`` with no arguments runs the default config.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

from allfives_agents.features.action_features import FEATURE_COUNTS
from allfives_env.game.rules import Rules
from allfives_env.inputs.shipped import shipped_dir
from allfives_train import algos
from allfives_train.configio import (
    GameFields,
    Rename,
    coerce,
    field_docs,
    gather_values,
    renamer,
    unknown_fields,
)
from allfives_train.sections import (
    ACTOR,
    EVALUATION,
    FAST,
    POOL,
    Section,
    auto_shards,
    positive_ints,
    require_number,
)
from allfives_train.sections import flatten as sections_flatten

DEFAULT_CONFIG = shipped_dir("configs") / "train" / "default.yaml"  # the main job (distillation)
MASKABLE_CONFIG = DEFAULT_CONFIG.parent / "maskable_2p.yaml"  # the dataclass defaults, as YAML
__all__ = ["ACTOR", "EVALUATION", "FAST", "POOL", "TrainConfig", "auto_shards", "load_config"]


@dataclasses.dataclass
class TrainConfig(GameFields):
    """A training run of ``allfives train``: the fields every algo shares (the game's, the
    run's, the network's and the learner's), then ``sections``: one dataclass per section of
    the algorithm table (train/algos.py), each under its key in the YAML. Which sections an
    algo reads is its row's ``sections``; a field it does not read, set in its config, is
    named in a note. See docs/training.md."""

    # --- the game: preset, players, teams, rules_file, rules (train/configio.py) ----------

    # --- the run ----------------------------------------------------------------------
    algo: str = "maskable_ppo"
    """The algorithm, a row of the algorithm table (train/algos.py), run by the run shell
    (train/shell/run.py): ``maskable_ppo`` (sb3-contrib's MaskablePPO over scalar envs,
    imitation warm start), ``ppo_batched`` (the fast path: own masked PPO in torch over a
    VectorEnv of whole batches; configs/train/fast_2p.yaml), ``search_distill`` (the
    action_features actor fitted to a search's value of every legal move;
    configs/train/distill_2p.yaml), ``dmc`` (Deep Monte-Carlo: the actor's logits read
    as action values, regressed on the returns of its own epsilon-greedy games;
    configs/train/dmc_2p.yaml), ``rllib_ppo`` (multi-agent PPO on Ray RLlib, its own fields in
    the ``rllib`` section; ``--algo rllib_ppo`` alone runs configs/train/rllib.yaml)."""
    total_steps: int = 150_000
    """Learner decisions to train for (SB3 timesteps), counted across all envs, rounded up
    to whole rollouts where the algo's steps come in rollouts (train/shell/budget.py, said in
    the start line); ``search_distill``: positions to label."""
    seed: int = 0
    """Seeds the envs, the opponents and the network initialisation."""
    run_dir: str = "runs/main_{preset}_{players}p"
    """Where checkpoints, TensorBoard logs and the learning curve go ({preset},
    {players} and {seed} are filled in; with rllib_ppo {policy} too: ``rllib.policy``)."""
    n_envs: int = 64
    """Games played side by side."""
    torch_threads: int = 1
    """torch threads in each process (keep 1: the envs use the other cores)."""
    progress: bool = True
    """Show a progress bar."""
    init_from: str | None = None
    """Start from this checkpoint's weights (a checkpoint directory) instead of at random
    (maskable_ppo: its ``model.zip``, which can run code when loaded, so only with
    ``--trust-checkpoint``, docs/faults.md; ``search_distill``, ``dmc`` and ``rllib_ppo``'s
    engine batched: an action_features checkpoint of the same table, a ``ckpt:`` name or a
    folder)."""
    device: str = "auto"
    """Where the learner trains its network (every algo: ppo_batched, dmc, search_distill's
    fit, maskable_ppo through SB3's own ``device``): ``cpu``, ``cuda`` or ``auto`` (a GPU
    where one exists); the games always run on the CPU, and the learner's random draws are
    made on its device (train/algorithms/ppo_batched/net.py ``generator_on``)."""
    precision: str = "auto"
    """The learner's network arithmetic: ``auto`` (bf16 where the device computes it natively:
    a CPU with AVX512-BF16 or AMX, a GPU that supports it; fp32 elsewhere; the run prints what
    it chose and why, train/algorithms/ppo_batched/precision.py), ``fp32``, or ``bf16`` (torch
    autocast to bfloat16: about twice the learner's speed where native; emulated elsewhere,
    about 4.5x slower than fp32, and the run says so)."""
    engine: str = "auto"
    """The engine that plays the training games: ``batched`` (the batched engine), ``scalar``
    (one scalar game at a time) or ``auto`` (batched when it is installed). ppo_batched: its
    VectorEnv (train/games/vector_env.py or the scalar loop). search_distill: the labelling
    games and the teacher's batched version (``search``'s numba kernel, or
    ``search:net=...``'s lock-step rollouts); ``auto`` labels on the scalar engine a teacher
    that has none (``search:net=...`` with ``prior``, ``topk`` or ``infer``)."""
    address: str | None = None
    """Play on the Ray cluster at this address (``auto``: the one ``ray start`` began on this
    machine, or ``host:port``; needs the ``rllib`` extra; the ``--address`` flag):
    search_distill's label shards as Ray tasks, ppo_batched's and dmc's rollouts by Ray
    actors; null: local processes. The learner, the fit and the evaluations run on this
    machine. rllib_ppo: its env runners (and learners) join that cluster; null: a local Ray
    instance of ``rllib.num_cpus``."""
    checkpoint_every: int = 50_000
    """Write a checkpoint every this many steps (and at the end; rllib_ppo counts
    iterations: ``rllib.checkpoint_every``)."""

    # --- the network and PPO -----------------------------------------------------------
    net_arch: list[int] = dataclasses.field(default_factory=lambda: [128, 128])
    """Hidden layer sizes of the actor and of the (separate) critic."""
    activation: str = "relu"
    """Hidden activation: relu or tanh."""
    learning_rate: float = 1e-4
    """Adam step size (constant unless ``fast.anneal_lr``; on the fast path a resumed run
    takes its config's)."""
    n_steps: int = 64
    """Steps per env per rollout; a rollout is n_steps * n_envs decisions."""
    batch_size: int = 512
    """Minibatch size of each gradient step."""
    n_epochs: int = 4
    """Passes over each rollout."""
    gamma: float = 0.995
    """Discount per learner decision (a 2-seat game is about 60 decisions)."""
    max_grad_norm: float = 0.5
    """Gradient norm clip."""

    # --- reward -------------------------------------------------------------------------
    margin_reward: float = 1.0
    """Dense reward weight: (change in own side's score minus the mean change of the other
    sides' scores) / target, summed over the learner's move and the opponents' replies."""
    win_reward: float = 1.0
    """Terminal reward: +win_reward for a win, -win_reward / (sides - 1) for a loss."""

    sections: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Each section of the algorithm table by its key (train/sections.py; the YAML's
    ``dmc:``, ``pool:`` ...): :meth:`section` reads one; those left out take their defaults."""

    def __post_init__(self) -> None:
        given = self.sections
        self.sections = {}
        for key, section in algos.sections().items():  # a copy each: never shared
            own = given.get(key)
            self.sections[key] = section.cls() if own is None else dataclasses.replace(own)
        validate(self)

    def section(self, section: Section[Any]) -> Any:
        """This config's values of ``section`` (an instance of its dataclass)."""
        return self.sections[section.key]

    def value(self, name: str) -> Any:
        """The value of a field by its flat name (its flag's: ``dmc_epsilon``, ``gamma``)."""
        spot = flat_fields()[name]
        owner = self if spot.section is None else self.sections[spot.section.key]
        return getattr(owner, spot.attr)

    def replace(self, **flat: Any) -> TrainConfig:
        """A copy with the fields named by their flat names (``opponents=...``,
        ``dmc_epsilon=...``) set, validated as a whole."""
        spots = flat_fields()
        shared: dict[str, Any] = {}
        sections = dict(self.sections)
        for name, value in flat.items():
            spot = spots[name]
            if spot.section is None:
                shared[spot.attr] = value
            else:
                key = spot.section.key
                sections[key] = dataclasses.replace(sections[key], **{spot.attr: value})
        return dataclasses.replace(self, **shared, sections=sections)

    def to_dict(self) -> dict[str, Any]:
        """The config as its YAML: the shared fields, then the sections its algo reads."""
        out = dataclasses.asdict(self)
        sections = out.pop("sections")
        row = algos.ALGOS.get(self.algo)
        keys = [s.key for s in row.sections] if row is not None else list(sections)
        out.update({k: sections[k] for k in keys})
        return out

    def resolved_run_dir(self) -> Path:
        """``run_dir`` with its ``{preset}``, ``{players}``, ``{seed}`` (and the algo's own
        keys: :attr:`~allfives_train.algos.Algo.run_dir_keys`) filled in."""
        keys = {key: self.value(name) for key, name in algos.get(self.algo).run_dir_keys}
        return Path(self.run_dir.format(preset=self.game().rules.preset, players=self.players,
                                        seed=self.seed, **keys))


@dataclasses.dataclass(frozen=True)
class Flat:
    """One config field by its flat name (its flag): where it lives."""

    name: str
    """The flat name: ``dmc_epsilon``, ``gamma``."""
    section: Section[Any] | None
    """Its section; None: a shared field of ``TrainConfig``."""
    field: dataclasses.Field

    @property
    def attr(self) -> str:
        """Its attribute in its dataclass (``epsilon``)."""
        return self.field.name

    @property
    def owner(self) -> type:
        """Its dataclass: ``TrainConfig`` or the section's."""
        return TrainConfig if self.section is None else self.section.cls

    @property
    def dotted(self) -> str:
        """How a YAML file nests it: ``dmc.epsilon``, ``gamma``."""
        return self.name if self.section is None else self.section.dotted(self.attr)

    def default(self) -> Any:
        f = self.field
        return f.default_factory() if callable(f.default_factory) else f.default


def flat_fields() -> dict[str, Flat]:
    """Every field by its flat name: the shared ones, then each section's (the table's, so
    a registered algo's section is there too)."""
    out = {f.name: Flat(f.name, None, f) for f in dataclasses.fields(TrainConfig)
           if f.name != "sections"}
    for section in algos.sections().values():
        for f in dataclasses.fields(section.cls):
            name = section.flat(f.name)
            if name in out:
                raise ValueError(f"section {section.key}: field {f.name}'s flat name {name} "
                                 f"is taken by {out[name].dotted}")
            out[name] = Flat(name, section, f)
    return out


def flatten(values: dict[str, Any], label: str = "config") -> dict[str, Any]:
    """``values`` with the table's sections by their flat names (:func:`sections.flatten`)."""
    return sections_flatten(values, algos.sections(), label)


#: Options that were removed (docs/strength.md: they trained no better), each with the value
#: that turned it off and the last commit that has it.
RETIRED: dict[str, tuple[Any, str]] = {"oracle_critic": (False, "2f888d7"),
                                       "belief_aux": (0.0, "2f888d7")}


def retire(values: dict[str, Any], label: str = "config") -> dict[str, Any]:
    """``values`` less the removed options: a saved config (a run's ``config.yaml``, a
    card's) holds them turned off and still loads; set to anything else, a ValueError in one
    line (what it asked for is gone)."""
    out = dict(values)
    for name, (off, commit) in RETIRED.items():
        if name in out and out.pop(name) != off:
            raise ValueError(f"{label} {name}={values[name]!r}: this option was removed (it "
                             f"trained no better, docs/strength.md; the last commit with it is "
                             f"{commit}): remove it from the config")
    return out


def implied_defaults(values: dict[str, Any]) -> dict[str, Any]:
    """Defaults meant for another algo never fail a config that leaves them out: with an
    ``algo`` that has no warm start, ``bc_teacher`` defaults to null; with one that trains only
    the action_features actor, ``policy`` defaults to it; with ``eval_opponents`` set without
    ``greedy``, ``best_metric`` defaults to its first entry; and the algo's own defaults
    (:attr:`~allfives_train.algos.Algo.defaults`). Fields in ``values`` (the user's config and
    flags) are kept as set and checked by :func:`validate`."""
    out: dict[str, Any] = {}
    algo = values.get("algo", "maskable_ppo")
    row = algos.ALGOS.get(algo) if isinstance(algo, str) else None
    if row is not None:
        out.update(algos.defaults(row.name))
    if row is not None and not row.warm_start:
        out["bc_teacher"] = None
    if row is not None and row.features_by_default:
        out["policy"] = "action_features"
    evals = values.get("eval_opponents")
    if isinstance(evals, list) and evals and all(isinstance(e, str) for e in evals) \
            and "greedy" not in evals:
        out["best_metric"] = evals[0]
    return out


def old_names_reader(algo: Any, moved: dict[str, str]) -> Rename | None:
    """For algo ``algo``'s old flat names (:attr:`~allfives_train.algos.Algo.old_names`):
    what reads one mapping with them as their new names (:func:`configio.renamer`: only its
    top-level keys, and only in a mapping with neither the section of the new names,
    ``rllib:``, that every config written since holds, nor a new name), recording each in
    ``moved``; None: the algo has none."""
    row = algos.ALGOS.get(algo) if isinstance(algo, str) else None
    if row is None or not row.old_names:
        return None
    spots = flat_fields()
    homes = {section.key for _, new in row.old_names
             if (section := spots[new].section) is not None}
    return renamer(row.old_names, homes, moved)


def old_names_note(algo: Any, moved: dict[str, str]) -> str | None:
    """One line naming each old name read as its new one (None: none)."""
    if not moved:
        return None
    spots = flat_fields()
    parts = [f"{old} is now {spots[new].dotted} (--{new.replace('_', '-')})"
             for old, new in moved.items()]
    return f"allfives train: note: with algo {algo}, {'; '.join(parts)}: read as the new names"


def _validate_seed(seed: object) -> None:
    """A seed is an integer from 0 to :data:`allfives_env.game.seeding.MAX_SEED` (a huge one is
    named by its number of digits, never converted to text)."""
    from allfives_env.game.seeding import MAX_SEED

    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"config seed={str(seed)[:40]!r}: must be an integer from 0 to "
                         "2**63 - 1")
    if not 0 <= seed <= MAX_SEED:
        shown = str(seed) if seed.bit_length() <= 256 else f"an integer of {seed.bit_length()} bits"
        raise ValueError(f"config seed={shown}: must be an integer from 0 to 2**63 - 1")


def validate(cfg: TrainConfig) -> None:
    """Raise ValueError naming the field (by its flat name), the value and what is allowed:
    the shared fields and the shared sections here, an algo's own section by its row's
    ``validate``."""
    def bad(name: str, allowed: str) -> ValueError:
        return ValueError(f"config {name}={cfg.value(name)!r}: {allowed}")

    cfg.game()  # the rules (RulesError, a ValueError, naming the option if bad)
    positive_ints(bad, {name: cfg.value(name) for name in (
        "total_steps", "n_envs", "n_steps", "batch_size", "n_epochs", "eval_games", "eval_every",
        "checkpoint_every", "snapshot_every", "snapshot_keep", "torch_threads")})
    _validate_workers(cfg, bad)
    _validate_seed(cfg.seed)
    if cfg.activation not in ("relu", "tanh"):
        raise bad("activation", "must be relu or tanh")
    if not cfg.net_arch or any(not isinstance(h, int) or h < 1 for h in cfg.net_arch):
        raise bad("net_arch", "must be a non-empty list of positive integers")
    lam = cfg.value("gae_lambda")
    if not 0.0 < cfg.gamma <= 1.0 or not 0.0 <= lam <= 1.0:
        raise ValueError(f"config gamma={cfg.gamma}, gae_lambda={lam}: "
                         "gamma must be in (0, 1] and gae_lambda in [0, 1]")
    row = algos.ALGOS.get(cfg.algo)
    _validate_pool(cfg.section(POOL).opponents, bad, row is not None and row.empty_pool)
    _validate_algo(cfg, bad)
    evaluation = cfg.section(EVALUATION)
    if evaluation.best_metric not in evaluation.opponents:
        raise bad("best_metric", f"must be one of eval_opponents {evaluation.opponents}")


def _validate_pool(opponents: list[dict[str, Any]], bad: Any, may_be_empty: bool) -> None:
    """``opponents``: entries ``{agent: ID, weight: W}``, the weights not all zero; at least
    one unless ``may_be_empty`` (the algo's :attr:`~allfives_train.algos.Algo.empty_pool`)."""
    if not opponents and not may_be_empty:
        raise bad("opponents", "needs at least one entry")
    for entry in opponents:
        if not isinstance(entry, dict) or "agent" not in entry:
            raise bad("opponents", "entries look like {agent: greedy, weight: 1.0}")
        extra = set(entry) - {"agent", "weight"}
        weight = entry.get("weight", 1.0)
        if extra or isinstance(weight, bool) or not isinstance(weight, (int, float)) \
                or weight < 0:
            raise bad("opponents", "entries have keys agent and weight (a number >= 0)")
    if opponents and sum(float(e.get("weight", 1.0)) for e in opponents) <= 0:
        raise bad("opponents", "the weights must not all be zero")


def _validate_workers(cfg: TrainConfig, bad: Any) -> None:
    """``rollout_workers``: auto, null or an integer >= 1; ``rollout_shards``: an integer
    >= 1; ``address``: null or an address."""
    fast = cfg.section(FAST)
    r = fast.rollout_workers
    if r not in (None, "auto") and (isinstance(r, bool) or not isinstance(r, int) or r < 1):
        raise bad("rollout_workers", "must be auto (one per core) or an integer >= 1")
    k = fast.rollout_shards
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise bad("rollout_shards", "must be auto (one per core) or an integer >= 1")
    a = cfg.address
    if a is not None and (not isinstance(a, str) or not a.strip() or a != a.strip()
                          or any(c.isspace() for c in a)):
        raise bad("address", "must be null (local processes), auto or a Ray cluster's "
                             "host:port")


ALGOS = algos.config_algos()  # its algo names (train/algos.py holds the table)


def _validate_algo(cfg: TrainConfig, bad: Any) -> None:
    """The algo, device, engine and precision fields, the actor, then the algo's own checks."""
    if cfg.algo not in algos.config_algos():  # (registered ones too)
        raise bad("algo", f"must be one of {', '.join(algos.config_algos())}")
    if cfg.device not in ("cpu", "cuda", "auto"):
        raise bad("device", "must be cpu, cuda or auto")
    if cfg.engine not in ("auto", "batched", "scalar"):
        raise bad("engine", "must be auto, batched or scalar")
    _validate_actor(cfg.section(ACTOR), bad)
    if cfg.precision not in ("auto", "fp32", "bf16"):
        raise bad("precision", "must be fp32 or bf16, or auto (bf16 only where the device "
                               "computes it natively)")
    algos.validate(cfg, bad)  # the algo's own checks (train/algos.py names them)


def _validate_actor(actor: Any, bad: Any) -> None:
    """The actor section: its policy, its start and its features."""
    if actor.policy not in ("mlp", "action_features"):
        raise bad("policy", "must be mlp or action_features")
    require_number(bad, "feature_temperature", actor.feature_temperature, unit=False)
    if actor.feature_start not in ("heuristic", "zero"):
        raise bad("feature_start", "must be heuristic or zero")
    if isinstance(actor.move_head, bool) or not isinstance(actor.move_head, int) \
            or actor.move_head < 0:
        raise bad("move_head", "must be an integer >= 0 (0: no per-move head)")
    if actor.move_head and actor.policy != "action_features":
        raise bad("move_head", "is for policy action_features")
    if actor.features is not None and (isinstance(actor.features, bool) or actor.features
                                       not in FEATURE_COUNTS or actor.policy != "action_features"):
        counts = ", ".join(map(str, FEATURE_COUNTS))
        raise bad("features", f"must be null or one of {counts}, with policy action_features")
    _validate_view(actor, bad)


def _validate_view(actor: Any, bad: Any) -> None:
    """``action_view``: null, or a view other than raw for the action_features actor, read
    from zero weights and in place of ``features``."""
    if actor.action_view is None:
        return
    from allfives_env.envs.action_views import ACTION_VIEWS

    views = [v for v in ACTION_VIEWS if v != "raw"]
    if actor.action_view not in views or actor.policy != "action_features":
        raise bad("action_view", f"must be null or one of {', '.join(views)}, with policy "
                                 "action_features (raw: policy mlp reads the observation)")
    if actor.features is not None:
        raise bad("features", "is for the registered features: with action_view set, the "
                              "actor reads the view's columns (set features to null)")
    if actor.feature_start != "zero" and actor.action_view != "heuristic":
        raise bad("feature_start", f"the heuristic's weights are over the registered "
                                   f"features, not the columns of action view "
                                   f"{actor.action_view}: set feature_start: zero")


def ignored_note(cfg: TrainConfig) -> str | None:
    """One line naming the fields that ``cfg`` sets (to other than their default) and that its
    algo does not read (train/algos.py :func:`~allfives_train.algos.ignored`); None: none."""
    defaults = {name: spot.default() for name, spot in flat_fields().items()}
    defaults.update(implied_defaults({"algo": cfg.algo}), rollout_shards=auto_shards())
    unread = algos.ignored_set(cfg, defaults)
    if not unread:
        return None
    return (f"allfives train: note: algo {cfg.algo} does not read {', '.join(unread)} (other "
            f"algos' settings, train/algos.py): they have no effect on this run")


def load_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None,
                game_args: Any = None, label: str = "config") -> TrainConfig:
    """The defaults, updated by the YAML file at ``path`` (and the files it ``extends``),
    then by ``overrides``, then by the game flags of ``game_args`` (an argparse namespace),
    each mapping read with its sections flattened (:func:`flatten`), checked once as a whole:
    the removed options dropped (:func:`retire`), then unknown fields refused, the defaults
    implied by the fields set added (:func:`implied_defaults`), each value type-checked, and
    the whole validated (:func:`validate`). ``label`` starts each error (a recipe names its
    stage)."""
    sections = algos.sections()
    first = gather_values(TrainConfig, path, None, label, sections=sections)
    algo = (overrides or {}).get("algo", first.get("algo"))
    moved: dict[str, str] = {}
    rename = old_names_reader(algo, moved)
    read = first if rename is None else gather_values(TrainConfig, path, None, label,
                                                      sections=sections, rename=rename)
    over = flatten(rename(overrides or {}) if rename else overrides or {}, label)
    note = old_names_note(algo, moved)
    if note:
        print(note, file=sys.stderr, flush=True)
    values = retire(gather_values(TrainConfig, None, {**read, **over}, label, game_args), label)
    spots = flat_fields()
    unknown = sorted(set(values) - set(spots), key=str)
    if unknown:
        names = [*spots, *(s.dotted for s in spots.values() if s.section is not None)]
        raise ValueError(unknown_fields([str(u) for u in unknown], names, label))
    values = {**implied_defaults(values), **values}
    shared: dict[str, Any] = {}
    own: dict[str, dict[str, Any]] = {key: {} for key in algos.sections()}
    for name, value in values.items():
        spot = spots[name]
        checked = coerce(spot.owner, spot.attr, value, label, shown=name)
        (shared if spot.section is None else own[spot.section.key])[spot.attr] = checked
    sections = {key: algos.sections()[key].cls(**kwargs) for key, kwargs in own.items()}
    return TrainConfig(**shared, sections=sections)


def make_rules_for(cfg: TrainConfig) -> Rules:
    """The rules of ``cfg``'s game (its preset, rules file, seats and overrides)."""
    return cfg.game().rules


def field_help(name: str) -> str:
    """The docstring of a field by its flat name (parsed from its dataclass's source)."""
    spot = flat_fields().get(name)
    return "" if spot is None else field_docs(spot.owner).get(spot.attr, "")
