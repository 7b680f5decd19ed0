"""``save_policy(policy, directory, **game)``: any policy as a checkpoint that ``ckpt:DIR`` plays.

Public as ``allfives.save_policy`` (docs/environment.md, "Saving your policy"). It writes
``card.json`` (the model card :func:`allfives_agents.trained.checkpoint.read_card` checks) and
``policy.npz`` (numpy arrays, :mod:`allfives_agents.trained.policy_numpy`) into ``directory``, so
the
policy plays wherever a checkpoint does: ``allfives eval --agents ckpt:DIR ...``,
``allfives.opponent("ckpt:DIR", env)``, ``make_vec(..., opponents=["ckpt:DIR"])``,
``search:net=DIR`` and the browser (``allfives serve --model NAME=DIR``), with the moves the live
policy makes (the masked argmax of its logits).

What it takes (torch is imported only for a torch module or an SB3 policy):

* a torch module mapping the 386-float observation to the 140 action logits whose layers, in
  the order they are defined, are ``Linear`` layers with one activation (``ReLU`` or ``Tanh``,
  the same everywhere) between them and none after the last: an ``nn.Sequential`` or a module
  whose ``forward`` applies its layers in that order (checked: both are run on observations of
  real games and must agree);
* an SB3 policy or model (``PPO``, sb3-contrib ``MaskablePPO``, their ``MlpPolicy``) on the
  flat observation: its actor, and its critic as the checkpoint's value network;
* a :class:`~allfives_agents.trained.policy_numpy.NumpyPolicy` or its ``arrays()`` (a dict of the
  ``policy.npz`` arrays): the weights of a callable policy, as the training code hands them
  around.

With an action view (``facts``: F = 48 floats per action row, ``heuristic``: 17; found from
the sizes, or ``action_view=``) a torch module may also map ``386 + 140 F`` (the observation
and the rows flattened) to 140 logits, or score one action: ``F -> 1`` on its row, or
``386 + F -> 1`` on the observation followed by its row (the kinds of
:mod:`allfives_agents.trained.policy_numpy`); an SB3 policy trained with the view is saved as the
flat kind; the residual actor's arrays carry ``kind = "action_view[_head]/<view>"``.
``ckpt:DIR`` computes the rows from the seat's own view when it plays.

A plain function has no weights to save; anything not listed is refused in one line naming
what is allowed. ``**game`` is the table the policy plays: a preset and rule options
(``players=3``, ``teams=False``, ...) or ``rules=make_rules(...)``, as ``allfives_env.env``.

Files: ``directory`` is created if missing. It must be empty, or hold only what an earlier
``save_policy`` wrote there (``card.json`` whose ``writer`` is ``save_policy``, and
``policy.npz``), which is then replaced; anything else is refused and nothing is written.
Each file is written to a temporary name and renamed into place.
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from allfives_agents.trained.cardcheck import POLICY_FILE
from allfives_agents.trained.checkpoint import CARD_FORMAT, load_checkpoint
from allfives_agents.trained.policy_numpy import NumpyPolicy, card_spec
from allfives_env.envs.action_views import ACTION_VIEWS, action_view_names, check_action_view
from allfives_env.game.observation import OBS_LAYOUT_ID, OBS_SIZE
from allfives_env.game.rules import Rules, make_rules
from allfives_env.game.tiles import N_ACTIONS

__all__ = ["save_policy", "to_numpy_policy"]

WRITER = "save_policy"
CARD_FILE = "card.json"
OURS = (CARD_FILE, POLICY_FILE)
ACTIVATIONS = {"ReLU": "relu", "Tanh": "tanh"}
SUPPORTED = ("a torch module of Linear layers with ReLU or Tanh between them (one kind), "
             "an SB3 policy or model, a NumpyPolicy or its arrays() dict")
#: How far the exported network's logits may be from the live module's (float32 sums).
TOLERANCE = 1e-4


def save_policy(policy: Any, directory: str | Path, *, action_view: str | None = None,
                preset: str = "all_fives", rules: Rules | None = None, note: str | None = None,
                **rule_options: Any) -> Path:
    """Write ``policy`` as a checkpoint in ``directory`` (see the module docstring) and return
    the directory; ``ckpt:<directory>`` then plays it. One-line ``ValueError`` for a policy
    that cannot be exported, a table that does not exist, or a directory holding other files
    (nothing is written then)."""
    if rules is None:
        rules = make_rules(preset, **rule_options)
    elif rule_options or preset != "all_fives":
        raise ValueError("save_policy: give either rules=Rules(...) or a preset and rule "
                         "options, not both")
    numpy_policy = to_numpy_policy(policy, action_view)
    target = _writable(Path(directory))
    card = _card(rules, numpy_policy, _source(policy), note)
    target.mkdir(parents=True, exist_ok=True)
    _write(target / POLICY_FILE, lambda f: np.savez(f, allow_pickle=False,
                                                    **numpy_policy.arrays()))
    _write(target / CARD_FILE, lambda f: f.write((json.dumps(card, indent=1) + "\n").encode()))
    load_checkpoint(str(target))  # what ckpt: reads back: a mistake here is ours, loudly
    return target


# ---------------------------------------------------------------------- conversion
def to_numpy_policy(policy: Any, action_view: str | None = None) -> NumpyPolicy:
    """The :class:`NumpyPolicy` of ``policy`` (any input of :func:`save_policy`);
    ``action_view``: the view it reads (None: found from its sizes)."""
    if action_view is not None:
        check_action_view(action_view)
    if isinstance(policy, NumpyPolicy):
        out = policy
    elif isinstance(policy, dict):
        out = NumpyPolicy.from_arrays(policy)
    elif _is_sb3(policy):
        out = from_sb3(getattr(policy, "policy", policy), action_view)
    elif _is_torch_module(policy):
        out = from_torch(policy, action_view)
    elif callable(policy):
        raise ValueError(f"save_policy: {_name(policy)} is a plain callable: it has no weights "
                         f"to save; give {SUPPORTED}")
    else:
        raise ValueError(f"save_policy: cannot export {_name(policy)}: give {SUPPORTED}")
    base = getattr(out, "base_obs_size", out.obs_size)
    if base != OBS_SIZE or out.n_actions != N_ACTIONS:
        raise ValueError(f"save_policy: the network maps {base} inputs to {out.n_actions} "
                         f"outputs; a policy maps the {OBS_SIZE}-float observation to "
                         f"{N_ACTIONS} action logits")
    reads = getattr(out, "action_view", None) or "raw"
    if action_view is not None and reads != action_view:
        raise ValueError(f"save_policy: action_view={action_view!r}, but the policy reads "
                         f"{reads!r}")
    return out


def _name(obj: Any) -> str:
    return getattr(obj, "__name__", None) or type(obj).__name__


def _is_torch_module(obj: Any) -> bool:
    return any(c.__module__.startswith("torch.nn") and c.__name__ == "Module"
               for c in type(obj).__mro__)


def _is_sb3(obj: Any) -> bool:
    inner = getattr(obj, "policy", obj)
    return any(c.__module__.startswith("stable_baselines3") and c.__name__ == "BasePolicy"
               for c in type(inner).__mro__)


def _source(policy: Any) -> str:
    """The card's ``algo``: what was exported."""
    if _is_sb3(policy):
        return f"{type(policy).__name__} (Stable-Baselines3), exported by save_policy"
    if _is_torch_module(policy):
        return f"torch module {type(policy).__name__}, exported by save_policy"
    return "numpy policy, exported by save_policy"


def _layers(modules: list[Any], what: str) -> tuple[list[Any], str]:
    """(the Linear layers, the activation) of ``modules`` (leaves, in order), or a one-line
    ValueError naming the layers that are supported."""
    import torch

    linears: list[Any] = []
    acts: list[str] = []
    pattern = []
    for m in modules:
        if isinstance(m, torch.nn.Linear):
            linears.append(m)
            pattern.append("L")
        elif type(m).__name__ in ACTIVATIONS and type(m).__module__.startswith("torch.nn"):
            acts.append(type(m).__name__)
            pattern.append("A")
        elif isinstance(m, (torch.nn.Identity, torch.nn.Flatten, torch.nn.Dropout)):
            continue  # nothing at play time (Flatten of a [n, 386] batch is itself)
        else:
            raise ValueError(f"save_policy: {what} has a {type(m).__name__} layer: supported "
                             "are Linear layers with ReLU or Tanh between them (Identity, "
                             "Flatten and Dropout are skipped)")
    if not linears or "".join(pattern) != "LA" * (len(linears) - 1) + "L":
        shown = " ".join("Linear" if p == "L" else "act" for p in pattern) or "no layers"
        raise ValueError(f"save_policy: {what} is {shown}: supported is Linear, then any "
                         "number of (activation, Linear), no activation after the last")
    if len(set(acts)) > 1:
        raise ValueError(f"save_policy: {what} mixes activations {sorted(set(acts))}: one "
                         "kind (ReLU or Tanh) throughout")
    return linears, ACTIVATIONS[acts[0]] if acts else "relu"


def _arrays(linears: list[Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    import torch

    out = []
    with torch.no_grad():
        for m in linears:
            w = m.weight.detach().cpu().double().numpy().T.copy()
            b = (m.bias.detach().cpu().double().numpy().copy() if m.bias is not None
                 else np.zeros(w.shape[1]))
            out.append((w, b))
    return out


def _view_of(width: int, action_view: str | None, what: str) -> str:
    """The action view whose rows are ``width`` floats (checked against ``action_view``)."""
    views = {len(action_view_names(v)): v for v in ACTION_VIEWS if v != "raw"}
    if action_view not in (None, "raw") and len(action_view_names(action_view)) != width:
        raise ValueError(f"save_policy: {what} reads rows of {width} floats, but "
                         f"action_view={action_view!r} has {len(action_view_names(action_view))}")
    view = action_view or views.get(width)
    if view is None or view == "raw" or len(action_view_names(view)) != width:
        shown = ", ".join(f"{v} {n}" for n, v in views.items())
        raise ValueError(f"save_policy: {what} reads rows of {width} floats: no action view "
                         f"has them ({shown})")
    return view


def _shape_kind(n_in: int, n_out: int, action_view: str | None, what: str
                ) -> tuple[str, str, bool]:
    """(form, view, reads_obs) of a network mapping ``n_in`` to ``n_out`` (module docstring):
    ``plain`` 386 -> 140, ``flat`` 386 + 140 F -> 140, ``mlp`` F or 386 + F -> 1."""
    if n_out == N_ACTIONS and n_in == OBS_SIZE:
        if action_view not in (None, "raw"):
            raise ValueError(f"save_policy: action_view={action_view!r}, but {what} reads "
                             f"the {OBS_SIZE}-float observation alone (no rows)")
        return "plain", "raw", True
    if n_out == N_ACTIONS and n_in > OBS_SIZE and (n_in - OBS_SIZE) % N_ACTIONS == 0:
        return "flat", _view_of((n_in - OBS_SIZE) // N_ACTIONS, action_view, what), True
    if n_out == 1:
        sizes = {len(action_view_names(v)): v for v in ACTION_VIEWS if v != "raw"}
        if n_in > OBS_SIZE and n_in - OBS_SIZE in sizes:
            return "mlp", _view_of(n_in - OBS_SIZE, action_view, what), True
        return "mlp", _view_of(n_in, action_view, what), False
    raise ValueError(f"save_policy: {what} maps {n_in} inputs to {n_out} outputs; supported: "
                     f"the {OBS_SIZE}-float observation (with an action view: followed by its "
                     f"[140, F] rows flattened) to {N_ACTIONS} logits, or one action's row "
                     f"(F floats, or the observation then the row) to 1 score")


def from_torch(module: Any, action_view: str | None = None) -> NumpyPolicy:
    """The :class:`NumpyPolicy` of a torch module (module docstring), checked against it."""
    from allfives_agents.trained.policy_numpy import ActionMLPPolicy, FlatViewPolicy

    what = f"torch module {type(module).__name__}"
    leaves = [m for m in module.modules() if not list(m.children())]
    linears, activation = _layers(leaves, what)
    arrays = _arrays(linears)
    form, view, reads_obs = _shape_kind(arrays[0][0].shape[0], arrays[-1][0].shape[1],
                                        action_view, what)
    policy: NumpyPolicy
    if form == "plain":
        policy = NumpyPolicy(arrays, activation)
    elif form == "flat":
        policy = FlatViewPolicy(arrays, activation, view)
    else:
        policy = ActionMLPPolicy(arrays, activation, view, reads_obs)
    x = probe_inputs(view)
    n_rows = (x.shape[1] - OBS_SIZE) // N_ACTIONS
    if form == "mlp":  # the module scores each action's own row
        rows = x[:, OBS_SIZE:].reshape(len(x), N_ACTIONS, n_rows)
        inputs = np.concatenate([np.repeat(x[:, None, :OBS_SIZE], N_ACTIONS, axis=1), rows],
                                axis=2) if reads_obs else rows
        live = _run(module, inputs.reshape(len(x) * N_ACTIONS, -1), what)
        live = live.reshape(len(x), N_ACTIONS)
    else:
        live = _run(module, x, what)
    _agree(live, policy.logits(x), what)
    return policy


def _run(module: Any, x: np.ndarray, what: str) -> np.ndarray:
    """The module's output on ``x``, in eval mode (its mode restored), as float64."""
    import torch

    param = next(iter(module.parameters()), None)  # its device and dtype (GPU, float64)
    inputs = torch.as_tensor(x) if param is None else torch.as_tensor(
        x, device=param.device, dtype=param.dtype)
    with torch.no_grad():
        was = module.training
        module.eval()
        try:
            return module(inputs).double().cpu().numpy()
        except Exception as exc:  # noqa: BLE001 - the user's forward: say it in one line
            detail = str(exc).splitlines()[0] if str(exc) else ""
            raise ValueError(f"save_policy: {what} fails on a batch of [n, {x.shape[1]}] "
                             f"inputs ({type(exc).__name__}: {detail})") from None
        finally:
            module.train(was)


def _agree(live: np.ndarray, exported: np.ndarray, what: str) -> None:
    if live.shape != exported.shape:
        raise ValueError(f"save_policy: {what} returns shape {tuple(live.shape)} for "
                         f"{len(exported)} observations; a policy returns [n, {N_ACTIONS}] logits")
    gap = float(np.max(np.abs(live - exported) / (1.0 + np.abs(live))))
    if not gap <= TOLERANCE:
        raise ValueError(f"save_policy: {what}'s forward does not compute its layers in the "
                         f"order they are defined (logits differ by {gap:.3g}): supported is "
                         "Linear, activation, ..., Linear applied in order")


def from_sb3(policy: Any, action_view: str | None = None) -> NumpyPolicy:
    """The actor (and critic, as the value network) of an SB3 ``MlpPolicy`` /
    ``MaskableActorCriticPolicy`` on the flat observation (with an action view: the
    observation followed by the view's rows, ``allfives/AllFives-v0`` with ``action_view``)."""
    import torch

    from allfives_agents.trained.policy_numpy import FlatViewPolicy

    space = getattr(policy, "observation_space", None)
    shape = getattr(space, "shape", None)
    if not (isinstance(shape, tuple) and len(shape) == 1 and shape[0] >= OBS_SIZE):
        raise ValueError(f"save_policy: the SB3 policy observes {space}: supported is the "
                         f"flat observation of allfives/AllFives-v0 ({OBS_SIZE} floats, with "
                         "an action view followed by its rows)")
    _, view, _ = _shape_kind(shape[0], N_ACTIONS, action_view, "the SB3 policy")
    for attr in ("mlp_extractor", "action_net"):
        if not hasattr(policy, attr):
            raise ValueError(f"save_policy: {type(policy).__name__} has no {attr}: supported "
                             "are SB3 actor-critic MLP policies (PPO, A2C, MaskablePPO)")
    extractors = [getattr(policy, a, None) for a in
                  ("features_extractor", "pi_features_extractor", "vf_features_extractor")]
    if any(e is not None and type(e).__name__ != "FlattenExtractor" for e in extractors):
        raise ValueError("save_policy: the SB3 policy has a features extractor other than "
                         "FlattenExtractor: supported is the MlpPolicy's")
    ex = policy.mlp_extractor
    actor, activation = _layers([*ex.policy_net, policy.action_net], "the SB3 actor")
    out = (NumpyPolicy(_arrays(actor), activation) if view == "raw"
           else FlatViewPolicy(_arrays(actor), activation, view))
    critic, critic_act = _layers([*ex.value_net, policy.value_net], "the SB3 critic")
    if view == "raw" and (critic_act == activation or len(critic) == 1):
        out.with_value(_arrays(critic))  # a critic over the observation alone
    x = probe_inputs(view)
    with torch.no_grad():
        features = policy.extract_features(torch.as_tensor(x, device=policy.device))
        if isinstance(features, tuple):
            features = features[0]
        live = policy.action_net(ex.forward_actor(features)).double().cpu().numpy()
    _agree(live, out.logits(x), f"the SB3 policy {type(policy).__name__}")
    return out


def probe_observations(games: int = 4, seed: int = 0) -> np.ndarray:
    """[n, 386] float32 observations of the seat to act in a few random games of 2, 3 and 4
    seats."""
    return probe_inputs("raw", games, seed)


def probe_inputs(action_view: str = "raw", games: int = 4, seed: int = 0) -> np.ndarray:
    """[n, 386 + 140 F] float32: the observation of the seat to act in a few random games,
    followed by its ``action_view`` rows flattened (F = 0 for ``raw``)."""
    return np.stack(list(_random_positions(action_view, games, seed)))


def _random_positions(action_view: str, games: int, seed: int) -> Iterator[np.ndarray]:
    from allfives_env.env import env

    rng = np.random.default_rng(seed)
    for g in range(games):
        e = env(players=2 + g % 3, target=61, action_view=action_view)
        e.reset(seed=seed + g)
        for _agent in e.agent_iter(max_iter=400):
            obs, _, terminated, truncated, _ = e.last()
            if terminated or truncated:
                e.step(None)
                continue
            rows = obs.get("action_features", np.zeros((N_ACTIONS, 0), np.float32))
            yield np.concatenate([obs["observation"], rows.ravel()])
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


# ---------------------------------------------------------------------- files
def _writable(directory: Path) -> Path:
    """``directory``, if it is missing, empty, or holds only an earlier save_policy's output."""
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"save_policy: {str(directory)!r} is a file: give a directory")
    if not directory.exists():
        return directory
    present = sorted(p.name for p in directory.iterdir())
    if not present:
        return directory
    others = [n for n in present if n not in OURS]
    if others or CARD_FILE not in present or not _ours(directory / CARD_FILE):
        shown = ", ".join(others or present)
        raise ValueError(f"save_policy: {str(directory)!r} holds files save_policy did not "
                         f"write ({shown[:200]}): give a new or empty directory; nothing was "
                         "written")
    return directory


def _ours(card: Path) -> bool:
    try:
        data = json.loads(card.read_text()) if card.stat().st_size < 1 << 20 else None
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("writer") == WRITER


def _write(path: Path, fill: Callable[[Any], Any]) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            fill(f)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _card(rules: Rules, policy: NumpyPolicy, algo: str, note: str | None) -> dict[str, Any]:
    """The model card (the fields :func:`allfives_agents.trained.checkpoint.read_card` checks, and
    what the policy is)."""
    spec = card_spec(policy)
    return {
        "format": CARD_FORMAT, "writer": WRITER,
        "obs_layout": OBS_LAYOUT_ID, "obs_size": OBS_SIZE, "n_actions": N_ACTIONS,
        "players": rules.players, "teams": rules.teams,
        "rules": {**rules.to_dict(), "preset": rules.preset},
        "algo": algo, "policy_file": POLICY_FILE, "policy": spec,
        "value": policy.has_value, "steps": 0, "eval": None, "eval_history": [],
        "config": {}, "note": note,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
