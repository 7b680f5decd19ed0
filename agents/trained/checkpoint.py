"""``ckpt:<path>`` agents: trained policies played from their numpy weights (no torch).

A checkpoint is a directory holding ``card.json`` (the model card: observation layout, seats,
teams, rules, steps, evaluation results, the full training config) and ``policy.npz`` (the
actor network, see :mod:`allfives_agents.trained.policy_numpy`); ``model.zip`` (the SB3 model, for
resuming)
may be there too. ``ckpt:<name>`` finds a shipped model by name
(:mod:`allfives_agents.trained.models`)
and ``ckpt:best`` the shipped model for the rules of the game in play.
Options follow a comma: ``ckpt:all_fives_2p,sample=true,temperature=0.5``
samples from the policy instead of playing its best action.

A checkpoint made for another observation layout, action space, seat count or team setting
is refused with a message naming both values. Played under other rules than it was trained
with (another preset, target, ...), it warns once, in one line naming the differences.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from allfives_agents.base import Agent, Obs, register_prefix
from allfives_agents.features.action_features import policy_input
from allfives_agents.options import prefix_options
from allfives_agents.trained.cardcheck import check_card_fields, policy_path, read_card_json
from allfives_agents.trained.models import BEST, best_for, find_model
from allfives_agents.trained.policy_numpy import NumpyPolicy
from allfives_env.game.observation import OBS_LAYOUT_ID, OBS_SIZE
from allfives_env.game.rules import Rules
from allfives_env.game.tiles import N_ACTIONS
from allfives_env.game.view import SeatView
from allfives_env.inputs.safeyaml import shorten
from allfives_env.inputs.shipped import shipped_dir

CARD_FORMAT = "allfives-checkpoint/1"
SHIPPED_DIR = shipped_dir("checkpoints")


def resolve_checkpoint(ref: str) -> Path:
    """A checkpoint directory from a path (directory, or a file inside it) or a shipped name."""
    try:
        path = Path(ref).expanduser()
        if path.is_file():
            path = path.parent
        if (path / "card.json").is_file():
            return path
    except (OSError, ValueError, RuntimeError) as exc:  # a NUL byte, a name too long, ~nobody
        raise ValueError(f"checkpoint {ref[:80]!r} is not a usable path ({exc})") from None
    model = find_model(ref) if "/" not in ref and "\\" not in ref else None
    if model is not None and (model.directory / "card.json").is_file():
        return model.directory
    names = sorted(p.name for p in SHIPPED_DIR.glob("*") if (p / "card.json").is_file())
    raise ValueError(f"checkpoint {ref!r} not found: no directory {str(path)!r} with a "
                     f"card.json, and no shipped model of that name (shipped: "
                     f"{', '.join(names) or 'none'}, or best: see allfives models)")


def read_card(directory: Path) -> dict[str, Any]:
    """The model card, checked against this program's observation layout and actions."""
    where = repr(str(directory))
    card = read_card_json(directory / "card.json", where)  # size and nesting caps
    found = card.get("format") if isinstance(card, dict) else None
    if found != CARD_FORMAT:
        raise ValueError(f"checkpoint {where}: card.json is not an {CARD_FORMAT} "
                         f"model card (format {shorten(found)})")
    checks = (("obs_layout", OBS_LAYOUT_ID, "observation layout"),
              ("obs_size", OBS_SIZE, "observation size"),
              ("n_actions", N_ACTIONS, "action space size"))
    for key, ours, what in checks:
        if card.get(key) != ours:
            raise ValueError(f"checkpoint {where} was made for {what} "
                             f"{shorten(card.get(key))}, but this program uses {ours!r}: "
                             f"retrain it for {what} {ours!r}")
    check_card_fields(card, where)  # players, teams, rules, policy, policy_file: their types
    return card


def check_table(card: dict[str, Any], rules: Rules, where: str) -> None:
    """Refuse a table the checkpoint was not trained for (seat count or teams)."""
    if card["players"] != rules.players:
        raise ValueError(f"checkpoint {where} was trained for {card['players']} seats; this "
                         f"game has {rules.players} seats")
    if bool(card.get("teams")) != rules.teams:
        want = "with teams" if card.get("teams") else "without teams"
        have = "with teams" if rules.teams else "without teams"
        raise ValueError(f"checkpoint {where} was trained {want}; this game is played {have}")


def load_checkpoint(ref: str) -> tuple[Path, dict[str, Any], NumpyPolicy]:
    directory = resolve_checkpoint(ref)
    card = read_card(directory)
    policy = NumpyPolicy.load(policy_path(directory, card))  # a plain name inside directory
    inputs = getattr(policy, "base_obs_size", policy.obs_size)  # without per-action features
    if inputs != OBS_SIZE or policy.n_actions != N_ACTIONS:
        raise ValueError(f"checkpoint {str(directory)!r}: policy.npz maps {inputs} "
                         f"inputs to {policy.n_actions} actions; this program needs "
                         f"{OBS_SIZE} to {N_ACTIONS}")
    return directory, card, policy


class PolicyAgent(Agent):
    """Plays a :class:`NumpyPolicy` from its seat's observation: the best legal action, or a
    sample from the masked softmax when ``sample`` (training's ``self`` and snapshot
    opponents are these). ``policy=None``: uniform over the legal actions."""

    def __init__(self, policy: NumpyPolicy | None, seed: int | None = None,
                 sample: bool = False, temperature: float = 1.0) -> None:
        super().__init__(seed)
        if not isinstance(sample, bool):
            raise ValueError(f"option sample={sample!r}: must be true or false")
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) \
                or temperature <= 0:
            raise ValueError(f"option temperature={temperature!r}: must be a number > 0")
        self.policy, self.sample, self.temperature = policy, sample, float(temperature)

    def act(self, obs: Obs, view: SeatView) -> int:
        if len(view.legal) == 1:
            return view.legal[0]
        if self.policy is None:
            return int(view.legal[int(self.rng.integers(len(view.legal)))])
        if "observation" not in obs:
            raise ValueError(f"{self.name}: policy agents need the observation vector")
        mask = obs["action_mask"] if "action_mask" in obs else None
        if mask is None:
            mask = np.zeros(N_ACTIONS, dtype=np.int8)
            mask[list(view.legal)] = 1
        rng = self.rng if self.sample else None
        x = policy_input(self.policy, obs["observation"], view)  # + per-action features
        return self.policy.act(x, mask, rng, self.temperature)


class CheckpointAgent(PolicyAgent):
    """A trained checkpoint (see the module docstring)."""

    def __init__(self, ref: str, seed: int | None = None, sample: bool = False,
                 temperature: float = 1.0) -> None:
        policy = None
        self.directory: Path | None = None
        self.card: dict[str, Any] = {}
        if ref != BEST:  # ckpt:best is found at the first move, from the game's rules
            self.directory, self.card, policy = load_checkpoint(ref)
        super().__init__(policy, seed, sample, temperature)
        self._checked: set[tuple] = set()

    def load_for(self, rules: Rules) -> None:
        """``ckpt:best``: load the shipped model for ``rules`` (once; one-line ValueError where
        none plays that table). A named checkpoint is loaded already."""
        if self.directory is None:
            self.directory, self.card, self.policy = load_checkpoint(best_for(rules).name)

    def act(self, obs: Obs, view: SeatView) -> int:
        self.load_for(view.rules)
        if view.rules.key not in self._checked:
            self.check_rules(view.rules)
        return super().act(obs, view)

    def check_rules(self, rules: Rules) -> None:
        """Refuse another table; warn once (one line on stderr) about other rules."""
        where = repr(str(self.directory))
        check_table(self.card, rules, where)
        self._checked.add(rules.key)
        diffs = rules.differences(self.card.get("rules") or {})
        if diffs:
            shown = "; ".join(f"{k} {mine!r} (trained with {theirs!r})"
                              for k, mine, theirs in diffs)
            print(f"warning: checkpoint {where} was trained under other rules; this game "
                  f"has {shown}", file=sys.stderr)


def _load(rest: str, seed: int | None) -> Agent:
    if not rest.partition(",")[0].strip():
        raise ValueError("ckpt: needs a checkpoint: a shipped name (allfives models), best, or "
                         "a directory, e.g. ckpt:all_fives_2p or ckpt:runs/main_all_fives_2p/final")
    ref, options = prefix_options("ckpt", rest)
    unknown = sorted(set(options) - {"sample", "temperature"})
    if unknown:
        raise ValueError(f"ckpt option(s) {', '.join(map(repr, unknown))} unknown: options "
                         "are sample, temperature")
    return CheckpointAgent(ref, seed=seed, **options)


register_prefix("ckpt", _load, batched="allfives_agents.batched.bots:policy_bot")
