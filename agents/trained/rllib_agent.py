"""``rllib:<path>`` agents: modules trained with ``allfives train --algo rllib_ppo`` (Ray RLlib).

``<path>`` is a checkpoint directory written by the RLlib trainer (it holds the model card
``allfives_rllib.json`` beside RLlib's own files), or a run directory (its ``final/``
checkpoint is used). Options follow a comma:

* ``module=<id>``: the module to play (default: the card's module for the seat, i.e. ``main``
  for ``shared`` and ``selfplay`` runs, ``seat_<s>`` / ``side_<k>`` for per-seat and per-side
  runs);
* ``sample=true``: sample from the masked policy instead of playing its best action.

A checkpoint made for another observation layout, action space, seat count or team setting is
refused with a message naming both values, as for ``ckpt:``. Loading imports Ray and torch
(the ``rllib`` extra); importing this module does not. RLlib unpickles files of the checkpoint
when it loads it, which can run any code: an ``rllib:`` id loads only when the user trusts it
(``--trust-checkpoint``, :mod:`allfives_env.inputs.trust`); the checks of its card come first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from allfives_agents.base import Agent, Obs, register_prefix
from allfives_agents.options import prefix_options
from allfives_agents.trained.cardcheck import read_card_json
from allfives_agents.trained.checkpoint import check_table
from allfives_env.game.observation import OBS_LAYOUT_ID, OBS_SIZE
from allfives_env.game.rules import Rules
from allfives_env.game.tiles import N_ACTIONS
from allfives_env.game.view import SeatView
from allfives_env.inputs.trust import require_trust

CARD_NAME = "allfives_rllib.json"
CARD_FORMAT = "allfives-rllib/1"
MODULES_DIR = Path("learner_group") / "learner" / "rl_module"
OPTIONS = ("module", "sample")



def need_ray(what: str) -> None:
    """A clear error, not a traceback, when the ``rllib`` extra is missing."""
    import importlib.util

    for name in ("ray", "torch"):
        if importlib.util.find_spec(name) is None:
            raise ValueError(f"{what} needs Ray RLlib and torch, and {name} is not installed: "
                             "pip install -c constraints.txt -e '.[rllib]'")

def resolve(ref: str) -> Path:
    """The checkpoint directory for ``ref`` (a checkpoint, or a run directory's ``final``)."""
    try:
        path = Path(ref).expanduser()
        for candidate in (path, path / "final"):
            if (candidate / CARD_NAME).is_file():
                return candidate
    except (OSError, ValueError, RuntimeError) as exc:  # a NUL byte, a name too long, ~nobody
        raise ValueError(f"rllib checkpoint {ref[:80]!r} is not a usable path ({exc})") from None
    raise ValueError(f"rllib checkpoint {ref!r} not found: no {CARD_NAME} in {str(path)!r} "
                     f"or in its final/ (train one with: allfives train --algo rllib_ppo)")


def read_card(directory: Path) -> dict[str, Any]:
    """The card, checked against this program's observation layout and actions."""
    card = read_card_json(directory / CARD_NAME, repr(str(directory)))  # size, nesting caps
    found = card.get("format") if isinstance(card, dict) else None
    if found != CARD_FORMAT:
        raise ValueError(f"rllib checkpoint {str(directory)!r}: {CARD_NAME} is not an "
                         f"{CARD_FORMAT} card (format {found!r})")
    if card.get("engine") == "batched":
        raise ValueError(f"rllib checkpoint {str(directory)!r} was trained with engine "
                         f"batched: it plays as ckpt:{directory} (its policy.npz, data only)")
    for key, ours, what in (("obs_layout", OBS_LAYOUT_ID, "observation layout"),
                            ("obs_size", OBS_SIZE, "observation size"),
                            ("n_actions", N_ACTIONS, "action space size")):
        if card.get(key) != ours:
            raise ValueError(f"rllib checkpoint {str(directory)!r} was made for {what} "
                             f"{card.get(key)!r}, but this program uses {ours!r}: retrain it "
                             f"for {what} {ours!r}")
    return card


def seat_modules(card: dict[str, Any], directory: Path) -> list[str]:
    """The card's module per seat: a list of module ids."""
    found = card.get("seat_modules")
    if not isinstance(found, list) or not found or not all(isinstance(m, str) for m in found):
        raise ValueError(f"rllib checkpoint {str(directory)!r}: {CARD_NAME} has no "
                         "seat_modules list")
    return found


def module_path(directory: Path, module_id: str) -> Path:
    """Where module ``module_id`` is saved; ValueError when it is not there (or not a plain
    name: a module id never leaves the checkpoint)."""
    if not module_id or module_id in (".", "..") or "/" in module_id or "\\" in module_id:
        raise ValueError(f"rllib module {module_id[:80]!r}: not a module id (a plain name, "
                         "e.g. main or seat_0)")
    path = directory / MODULES_DIR / module_id
    if not path.is_dir():
        have = sorted(p.name for p in (directory / MODULES_DIR).glob("*") if p.is_dir())
        raise ValueError(f"rllib checkpoint {str(directory)!r} has no module {module_id!r}: "
                         f"it has {', '.join(have) or 'none'}")
    return path


def load_module(directory: Path, module_id: str) -> Any:
    """The RLModule ``module_id`` of an RLlib algorithm checkpoint (inference on CPU). RLlib
    unpickles files of the checkpoint, so this needs trust (:mod:`allfives_env.inputs.trust`)."""
    path = module_path(directory, module_id)
    require_trust(f"{str(directory)!r} is an RLlib checkpoint", directory)  # Ray or not
    need_ray("rllib: agents")
    import torch
    from ray.rllib.core.rl_module.rl_module import RLModule

    torch.set_num_threads(1)
    try:
        module = RLModule.from_checkpoint(str(path.resolve()))
    except Exception as exc:  # noqa: BLE001 (a damaged checkpoint, whatever Ray raises)
        detail = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise ValueError(f"rllib checkpoint {str(directory)!r}: module {module_id!r} does not "
                         f"load ({type(exc).__name__}: {detail})") from None
    module.eval()  # type: ignore[attr-defined]  # a torch module at run time
    return module


class RLlibAgent(Agent):
    """Plays an RLlib module: the best legal action, or a sample when ``sample=True``."""

    needs_obs = True

    def __init__(self, ref: str, seed: int | None = None, module: str | None = None,
                 sample: bool = False) -> None:
        super().__init__(seed)
        if not isinstance(sample, bool):
            raise ValueError(f"rllib option sample={sample!r}: must be true or false")
        if module is not None and not isinstance(module, str):
            raise ValueError(f"rllib option module={module!r}: must be a module id")
        self.directory = resolve(ref)
        self.card = read_card(self.directory)
        self.sample, self.module_id = sample, module
        ids = [module] if module is not None else \
            sorted(set(seat_modules(self.card, self.directory)))
        for m in ids:  # every refusal that needs nothing loaded comes first
            module_path(self.directory, m)
        require_trust(f"rllib:{ref} is an RLlib checkpoint", ref)  # with Ray or without
        need_ray("rllib: agents")
        self.modules = {m: load_module(self.directory, m) for m in ids}
        self._checked: Rules | None = None

    def module_for(self, seat: int) -> Any:
        return self.modules[self.module_id or self.card["seat_modules"][seat]]

    def act(self, obs: Obs, view: SeatView) -> int:
        import torch

        if view.rules is not self._checked:
            check_table(self.card, view.rules, repr(str(self.directory)))
            self._checked = view.rules
        if not obs or "observation" not in obs:
            raise ValueError("rllib agents need the observation vector")
        mask = np.zeros(N_ACTIONS, dtype=np.float32)
        mask[list(view.legal)] = 1.0
        batch = {"obs": {"observations": torch.as_tensor(obs["observation"][None]),
                         "action_mask": torch.as_tensor(mask[None])}}
        with torch.no_grad():
            out = self.module_for(view.seat).forward_inference(batch)
        logits = out["action_dist_inputs"][0].double().numpy()
        legal = np.asarray(view.legal)
        scores = logits[legal]
        if not self.sample:
            return int(legal[int(np.argmax(scores))])
        p = np.exp(scores - scores.max())
        return int(self.rng.choice(legal, p=p / p.sum()))


def _load(rest: str, seed: int | None) -> Agent:
    if not rest.partition(",")[0].strip():
        raise ValueError("rllib: needs a checkpoint, e.g. rllib:runs/rllib_shared_all_fives_2p")
    ref, options = prefix_options("rllib", rest)
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"rllib option(s) {', '.join(unknown)} unknown: options are "
                         f"{', '.join(OPTIONS)}")
    return RLlibAgent(ref, seed=seed, **options)


register_prefix("rllib", _load)
