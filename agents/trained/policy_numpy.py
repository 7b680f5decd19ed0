"""The actor network as plain numpy: no torch needed to play a trained checkpoint.

``policy.npz`` holds ``w0, b0, w1, b1, ..., wout, bout`` (weights stored input-major, so a
layer is ``x @ w + b``) and ``activation`` (``relu`` or ``tanh``). The forward pass is the
SB3 ``MlpPolicy`` actor: hidden layers with the activation, then the action logits; illegal
actions are masked out before the argmax (or the softmax when sampling).

A checkpoint of the fast path (``ppo_batched``, ``dmc``) also carries its critic, the learned
value of the rest of the game from the seat's own observation, as ``vw0, vb0, ..., vwout,
vbout`` (the same activation); :meth:`NumpyPolicy.value` reads it (``search:net=...,value=1``
uses it at its leaves). It is in the training reward's units: ``margin_reward`` x (own side's
points minus the mean of the others') / ``target`` from now on, plus ``win_reward`` for a won
game, as the card's config says. Older checkpoints have none (``has_value`` False).

Policies over an action view (``action_view="facts"`` or ``"heuristic"``,
:mod:`allfives_env.envs.action_views`; the section at the end): the ``policy.npz`` kinds of
networks that read, beside the 386-float observation, the view's ``[140, F]`` rows of the seat
to act (``allfives.save_policy`` writes them). Their input is the observation followed
by the rows flattened (``[386 + 140 F]``, what the flat envs hand out with that view); at
play time
:func:`allfives_agents.features.action_features.policy_input` computes the rows from the seat's own
:class:`~allfives_env.game.view.SeatView`
(:func:`allfives_env.envs.action_views.action_view_features`), and the batched bots from the
batched engine (``BatchedGames.action_features``). Kinds (``<v>``: ``facts`` or ``heuristic``):

``action_view_flat/<v>``
    an MLP over the whole flat input (``w0, b0, ..., wout, bout``, ``wout`` [H, 140]): an SB3
    ``MlpPolicy`` trained on ``allfives/AllFives-v0`` with that view, for instance.
``action_view_mlp/<v>``
    one small MLP scores every action from its own row: ``logits[a] = mlp(row[a])``, or with
    ``reads_obs`` true ``mlp(concat(observation, row[a]))`` (``w0`` [F or 386 + F, H] ...,
    ``wout`` [H, 1]). Rows of illegal actions are zero and masked out anyway.
``action_view/<v>``, ``action_view_head/<v>``
    the heuristic-residual actor (:class:`ResidualPolicy`,
    arrays ``feat_w``, ``feat_b`` and, with a head, ``head_h``, ``head_f``, ``head_b``,
    ``head_u``) with the view's rows as its per-action features.

Each may carry a critic (``vw0 ... vbout``) over the 386-float observation.
"""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from allfives_agents.features.action_features import REGISTRY
from allfives_env.envs.action_views import ACTION_VIEWS, action_view_names
from allfives_env.game.observation import OBS_SIZE
from allfives_env.game.tiles import N_ACTIONS
from allfives_env.inputs.safenpz import check_npz

_ACTIVATIONS = ("relu", "tanh")


class NumpyPolicy:
    """An MLP actor: ``logits(obs)``, ``act(obs, mask)``."""

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], activation: str) -> None:
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation {activation!r}: allowed are {', '.join(_ACTIVATIONS)}")
        if not layers:
            raise ValueError("a policy needs at least its output layer")
        layers = _float_layers(layers)
        if any(w.ndim != 2 or b.ndim != 1 for w, b in layers):
            raise ValueError("policy layers need 2-d weights and 1-d biases")
        for i, (w, b) in enumerate(layers):
            nxt = layers[i + 1][0].shape[0] if i + 1 < len(layers) else w.shape[1]
            if w.ndim != 2 or b.shape != (w.shape[1],) or nxt != w.shape[1]:
                raise ValueError("policy layer shapes do not chain")
            if not (np.isfinite(w).all() and np.isfinite(b).all()):
                raise ValueError(f"policy layer {i} holds NaN or infinite weights: a policy "
                                 "needs finite weights (did its training diverge?)")
        self.layers = layers
        self.activation = activation
        self.obs_size = self.layers[0][0].shape[0]
        self.n_actions = self.layers[-1][0].shape[1]
        self.critic: NumpyPolicy | None = None

    def with_value(self, layers: list[tuple[np.ndarray, np.ndarray]]) -> NumpyPolicy:
        """This policy carrying the critic ``layers`` (an MLP from the first ``obs_size``
        floats of the observation to one number, see the module; [] for none); returns
        itself."""
        self.critic = NumpyPolicy(layers, self.activation) if layers else None
        if self.critic and (self.critic.n_actions != 1
                            or self.critic.obs_size != self.layers[0][0].shape[0]):
            raise ValueError("policy value layers do not fit the observation or have more "
                             "than one output")
        return self

    @property
    def value_layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The critic's layers, [] without one."""
        return self.critic.layers if self.critic else []

    @property
    def has_value(self) -> bool:
        """Whether the checkpoint carries its critic (:meth:`value`)."""
        return self.critic is not None

    def value(self, obs: np.ndarray) -> np.ndarray:
        """The critic's value of ``obs`` ([n, >= obs_size] or one row; only the observation's
        first ``obs_size`` floats are read), in the training reward's units (module)."""
        if self.critic is None:
            raise ValueError("this checkpoint carries no value network (checkpoints of "
                             "ppo_batched and dmc trained since 2026-12-04 do)")
        x = np.asarray(obs, np.float32)
        one = x.ndim == 1
        x = np.ascontiguousarray((x[None] if one else x)[:, :self.critic.obs_size])
        v = self.critic.logits(x)[:, 0]
        return v[0] if one else v

    # ------------------------------------------------------------------ forward
    def hidden(self, obs: np.ndarray) -> np.ndarray:
        """The last hidden layer's activations for ``obs`` (one or a batch)."""
        x = obs
        relu = self.activation == "relu"
        for w, b in self.layers[:-1]:
            x = x @ w
            x += b
            if relu:
                np.maximum(x, 0.0, out=x)
            else:
                np.tanh(x, out=x)
        return x

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Action logits for one observation ``[obs_size]`` or a batch ``[n, obs_size]``."""
        w, b = self.layers[-1]
        return self.hidden(obs) @ w + b

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None,
            temperature: float = 1.0) -> int:
        """The best legal action (argmax), or a sample from the masked softmax when ``rng``
        is given."""
        z = self.logits(obs)
        z = np.where(mask.astype(bool), z, -np.inf)
        if rng is None:
            return int(np.argmax(z))
        z = (z - z.max()) / temperature
        p = np.exp(z)
        p /= p.sum()
        return int(rng.choice(len(p), p=p))

    # ------------------------------------------------------------------ files
    def arrays(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {"activation": np.array(self.activation)}
        for i, (w, b) in enumerate(self.layers[:-1]):
            out[f"w{i}"], out[f"b{i}"] = w, b
        out["wout"], out["bout"] = self.layers[-1]
        for i, (w, b) in enumerate(self.value_layers[:-1]):
            out[f"vw{i}"], out[f"vb{i}"] = w, b
        if self.value_layers:
            out["vwout"], out["vbout"] = self.value_layers[-1]
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> NumpyPolicy:
        if "kind" in arrays and cls is NumpyPolicy:
            return _from_kind(arrays)
        try:
            activation = str(arrays["activation"])
            layers = []
            i = 0
            while f"w{i}" in arrays:
                layers.append((arrays[f"w{i}"], arrays[f"b{i}"]))
                i += 1
            layers.append((arrays["wout"], arrays["bout"]))
        except KeyError as exc:
            raise ValueError(f"policy arrays lack {exc}") from None
        return cls(layers, activation).with_value(value_layers(arrays))

    def save(self, path: str | Path) -> None:
        with open(path, "wb") as f:
            np.savez(f, allow_pickle=False, **self.arrays())

    @classmethod
    def load(cls, path: str | Path) -> NumpyPolicy:
        arrays = read_npz(path, "policy file")
        try:
            return cls.from_arrays(arrays)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None


def value_layers(arrays: dict[str, np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The critic's layers in ``arrays`` (``vw0, vb0, ..., vwout, vbout``), [] if none."""
    if "vwout" not in arrays:
        return []
    try:
        layers, i = [], 0
        while f"vw{i}" in arrays:
            layers.append((arrays[f"vw{i}"], arrays[f"vb{i}"]))
            i += 1
        return [*layers, (arrays["vwout"], arrays["vbout"])]
    except KeyError as exc:
        raise ValueError(f"policy value arrays lack {exc}") from None


def read_npz(path: str | Path, what: str = "numpy .npz file") -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` file at ``path``, or a one-line ``ValueError`` for a file
    that is missing, truncated, not a zip, holds pickled objects or is over the caps of
    :func:`allfives_env.inputs.safenpz.check_npz` (checked before any array is allocated)."""
    check_npz(path, what)
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{path}: not a readable {what} ({detail})") from None


def _float_layers(layers: list[tuple[np.ndarray, np.ndarray]]
                  ) -> list[tuple[np.ndarray, np.ndarray]]:
    """The layers as contiguous float32 arrays; ValueError for non-numeric ones."""
    try:
        return [(np.ascontiguousarray(w, np.float32), np.ascontiguousarray(b, np.float32))
                for w, b in layers]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"policy weights are not numbers ({exc})") from None


# the kinds of an actor over per-action features, from the feature registry:
# ``action_features/<v>`` reads feature set v (the first ``REGISTRY.count(v)`` features);
# ``action_features_head/<v>`` the same, plus a per-move MLP head
KIND_FEATURES = REGISTRY.kinds()
HEAD_KINDS = tuple(REGISTRY.kind(v, head=True) for v in range(1, REGISTRY.latest + 1))
HEAD_ARRAYS = ("head_h", "head_f", "head_b", "head_u")


class ResidualPolicy(NumpyPolicy):
    """A heuristic-residual actor over per-action features
    (:mod:`allfives_agents.features.action_features`):
    ``logits[a] = base(h)[a] + F[a] . (h @ feat_w + feat_b)`` with ``h`` the torso of the
    386-float observation. Its input is the observation followed by ``F`` ([140, K]) flattened
    (``needs_features``); ``policy.npz`` carries ``kind = "action_features/<v>"``, the
    feature set it reads (:data:`KIND_FEATURES`). With a per-move head (``head``: ``head_h``
    [H, P], ``head_f`` [K, P], ``head_b`` [P], ``head_u`` [P]) the logits add
    ``relu(h @ head_h + F[a] @ head_f + head_b) @ head_u`` and the kind is
    ``action_features_head/<v>``."""

    needs_features = True

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], activation: str,
                 feat_w: np.ndarray, feat_b: np.ndarray,
                 head: dict[str, np.ndarray] | None = None) -> None:
        super().__init__(layers, activation)
        self.feat_w = np.ascontiguousarray(feat_w, np.float32)
        self.feat_b = np.ascontiguousarray(feat_b, np.float32)
        k = self.feat_b.shape[0]
        if self.feat_w.shape != (self.layers[-1][0].shape[0], k):
            raise ValueError("policy feature weights do not match the torso")
        self.head = None if head is None else _check_head(head, self.feat_w.shape[0], k)
        self.n_features = k
        self.base_obs_size = self.obs_size
        self.obs_size = self.base_obs_size + self.n_actions * k

    def logits(self, obs: np.ndarray) -> np.ndarray:
        x = np.asarray(obs, np.float32)
        one = x.ndim == 1
        x = x[None] if one else x
        o, f = x[:, :self.base_obs_size], x[:, self.base_obs_size:]
        f = f.reshape(len(x), self.n_actions, -1)
        h = self.hidden(np.ascontiguousarray(o))  # a strided batch multiplies slower
        w, b = self.layers[-1]
        u = h @ self.feat_w + self.feat_b  # [n, K]
        z = h @ w + b + np.einsum("nak,nk->na", f, u)
        if self.head is not None:
            z = z + self._head(h, f)
        return z[0] if one else z

    def _head(self, h: np.ndarray, f: np.ndarray) -> np.ndarray:
        """The per-move head's term [n, A]: computed once per row for the moves whose features
        are all 0 (illegal ones) and separately for the others."""
        p = self.head
        assert p is not None
        hh = h @ p["head_h"] + p["head_b"]  # [n, P]
        out = np.repeat((np.maximum(hh, 0.0) @ p["head_u"])[:, None], f.shape[1], axis=1)
        row, col = np.nonzero(f.any(axis=2))
        out[row, col] = np.maximum(hh[row] + f[row, col] @ p["head_f"], 0.0) @ p["head_u"]
        return out

    def arrays(self) -> dict[str, np.ndarray]:
        out = super().arrays()
        kind = next(k for k, n in KIND_FEATURES.items()  # the kind of this count and head
                    if n == self.n_features and (k in HEAD_KINDS) == (self.head is not None))
        out.update(kind=np.array(kind), feat_w=self.feat_w, feat_b=self.feat_b)
        out.update(self.head or {})
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> NumpyPolicy:
        rest = {k: v for k, v in arrays.items() if k != "kind" and k not in HEAD_ARRAYS}
        base = NumpyPolicy.from_arrays(rest)
        kind = str(arrays.get("kind"))
        try:
            head = ({k: arrays[k] for k in HEAD_ARRAYS}
                    if kind in HEAD_KINDS else None)
            policy = cls(base.layers, base.activation, arrays["feat_w"], arrays["feat_b"], head)
            policy.with_value(base.value_layers)
        except KeyError as exc:
            raise ValueError(f"policy arrays lack {exc}") from None
        if kind in KIND_FEATURES and policy.n_features != KIND_FEATURES[kind]:
            raise ValueError(f"policy kind {kind!r} reads {KIND_FEATURES[kind]} features, but "
                             f"its weights have {policy.n_features}")
        return policy


def _check_head(head: dict[str, np.ndarray], hidden: int, k: int) -> dict[str, np.ndarray]:
    """The per-move head's arrays as float32, or ValueError if their shapes do not fit."""
    out = {name: np.ascontiguousarray(head[name], np.float32) for name in HEAD_ARRAYS}
    p = out["head_b"].shape[0] if out["head_b"].ndim == 1 else -1
    want = {"head_h": (hidden, p), "head_f": (k, p), "head_b": (p,), "head_u": (p,)}
    if p < 1 or any(out[name].shape != shape for name, shape in want.items()):
        raise ValueError("policy per-move head arrays do not match the torso and features")
    return out


def _from_kind(arrays: dict[str, np.ndarray]) -> NumpyPolicy:
    kind = str(arrays["kind"])
    if is_view_kind(kind):
        return from_view_arrays(arrays)
    if kind not in KIND_FEATURES:
        raise ValueError(f"policy kind {kind!r} unknown: kinds are the plain MLP (no kind), "
                         f"{', '.join(map(repr, KIND_FEATURES))}, and over an action view "
                         f"{', '.join(map(repr, VIEW_KINDS))}")
    return ResidualPolicy.from_arrays(arrays)


# ---------------------------------------------------------------------- over an action view

FLAT, MLP, RESIDUAL, RESIDUAL_HEAD = ("action_view_flat", "action_view_mlp", "action_view",
                                      "action_view_head")
FORMS = (FLAT, MLP, RESIDUAL, RESIDUAL_HEAD)
VIEWS = tuple(v for v in ACTION_VIEWS if v != "raw")
#: Every kind of this module, e.g. ``action_view_mlp/facts``.
VIEW_KINDS = tuple(f"{form}/{view}" for form in FORMS for view in VIEWS)


def is_view_kind(kind: str) -> bool:
    return kind.partition("/")[0] in FORMS


def _width(view: str) -> int:
    if view not in VIEWS:
        raise ValueError(f"action view {view!r}: a policy reads one of {', '.join(VIEWS)}")
    return len(action_view_names(view))


class _ViewMixin:
    """What every view policy shares: the view it reads, its input size, its critic check."""

    action_view: str
    n_rows: int
    n_actions: int
    obs_size: int
    base_obs_size: int
    needs_features = False  # its rows are the view's (policy_input), not action_features'

    def _set_view(self, view: str) -> None:
        self.action_view, self.n_rows = view, _width(view)
        self.base_obs_size = OBS_SIZE
        self.obs_size = OBS_SIZE + N_ACTIONS * self.n_rows

    def with_value(self, layers: list[tuple[np.ndarray, np.ndarray]]) -> Any:
        """The critic reads the 386-float observation (the first floats of the input)."""
        critic = NumpyPolicy(layers, self.activation) if layers else None  # type: ignore[attr-defined]
        if critic is not None and (critic.n_actions != 1 or critic.obs_size != OBS_SIZE):
            raise ValueError(f"policy value layers map {critic.obs_size} inputs to "
                             f"{critic.n_actions}: a critic maps the {OBS_SIZE}-float "
                             "observation to one number")
        self.critic = critic
        return self

    def _split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
        x = np.asarray(x, np.float32)
        one = x.ndim == 1
        x = x[None] if one else x
        if x.shape[1] != self.obs_size:
            raise ValueError(f"policy over action view {self.action_view!r} takes "
                             f"{self.obs_size} inputs (386 + 140 x {self.n_rows}), not "
                             f"{x.shape[1]}")
        rows = x[:, OBS_SIZE:].reshape(len(x), N_ACTIONS, self.n_rows)
        return np.ascontiguousarray(x[:, :OBS_SIZE]), rows, one


class FlatViewPolicy(_ViewMixin, NumpyPolicy):
    """``action_view_flat/<v>``: an MLP over the observation and the rows, flattened."""

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], activation: str,
                 view: str) -> None:
        super().__init__(layers, activation)
        if self.obs_size != OBS_SIZE + N_ACTIONS * _width(view) or self.n_actions != N_ACTIONS:
            raise ValueError(f"a flat policy over action view {view!r} maps "
                             f"{OBS_SIZE + N_ACTIONS * _width(view)} inputs to {N_ACTIONS} "
                             f"logits; these layers map {self.obs_size} to {self.n_actions}")
        self._set_view(view)

    def arrays(self) -> dict[str, np.ndarray]:
        return {**super().arrays(), "kind": np.array(f"{FLAT}/{self.action_view}")}


class ActionMLPPolicy(_ViewMixin, NumpyPolicy):
    """``action_view_mlp/<v>``: one MLP scoring each action from its row (and, with
    ``reads_obs``, the observation before it)."""

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], activation: str,
                 view: str, reads_obs: bool) -> None:
        super().__init__(layers, activation)
        width = _width(view)
        want = width + (OBS_SIZE if reads_obs else 0)
        if self.obs_size != want or self.n_actions != 1:
            raise ValueError(f"a per-action MLP over action view {view!r} maps {want} inputs "
                             f"({'386 + ' if reads_obs else ''}{width}) to 1 score; these "
                             f"layers map {self.obs_size} to {self.n_actions}")
        self.reads_obs = bool(reads_obs)
        self._set_view(view)
        self.n_actions = N_ACTIONS

    def logits(self, obs: np.ndarray) -> np.ndarray:
        o, rows, one = self._split(obs)
        (w0, b0), rest = self.layers[0], self.layers[1:]
        h = rows @ w0[-self.n_rows:] + b0  # [n, 140, H]
        if self.reads_obs:
            h += (o @ w0[:OBS_SIZE])[:, None, :]
        for w, b in rest:
            h = (np.maximum(h, 0.0) if self.activation == "relu" else np.tanh(h)) @ w + b
        z = h[..., 0]
        return z[0] if one else z

    def arrays(self) -> dict[str, np.ndarray]:
        return {**super().arrays(), "kind": np.array(f"{MLP}/{self.action_view}"),
                "reads_obs": np.array(self.reads_obs)}


class ViewResidualPolicy(_ViewMixin, ResidualPolicy):
    """``action_view[_head]/<v>``: :class:`ResidualPolicy` with the view's rows as features."""

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], activation: str,
                 feat_w: np.ndarray, feat_b: np.ndarray, view: str,
                 head: dict[str, np.ndarray] | None = None) -> None:
        super().__init__(layers, activation, feat_w, feat_b, head)
        if self.n_features != _width(view):
            raise ValueError(f"action view {view!r} has {_width(view)} columns, but the "
                             f"policy's feature weights have {self.n_features}")
        self._set_view(view)

    def arrays(self) -> dict[str, np.ndarray]:
        out = NumpyPolicy.arrays(self)
        form = RESIDUAL_HEAD if self.head is not None else RESIDUAL
        out.update(kind=np.array(f"{form}/{self.action_view}"), feat_w=self.feat_w,
                   feat_b=self.feat_b)
        out.update(self.head or {})
        return out


def from_view_arrays(arrays: dict[str, np.ndarray]) -> NumpyPolicy:
    """The policy of a ``policy.npz`` whose kind is one of :data:`VIEW_KINDS`."""
    kind = str(arrays["kind"])
    form, _, view = kind.partition("/")
    if kind not in VIEW_KINDS:
        raise ValueError(f"policy kind {kind!r} unknown: the action-view kinds are "
                         f"{', '.join(VIEW_KINDS)}")
    rest = {k: v for k, v in arrays.items() if not k.startswith("v")
            and k not in ("kind", "reads_obs", "feat_w", "feat_b", *HEAD_ARRAYS)}
    base = NumpyPolicy.from_arrays(rest)  # the layers and activation, checked
    try:
        policy: NumpyPolicy
        if form == FLAT:
            policy = FlatViewPolicy(base.layers, base.activation, view)
        elif form == MLP:
            reads_obs = arrays.get("reads_obs", np.array(False))
            policy = ActionMLPPolicy(base.layers, base.activation, view, bool(reads_obs))
        else:
            head = {k: arrays[k] for k in HEAD_ARRAYS} if form == RESIDUAL_HEAD else None
            policy = ViewResidualPolicy(base.layers, base.activation, arrays["feat_w"],
                                        arrays["feat_b"], view, head)
    except KeyError as exc:
        raise ValueError(f"policy arrays lack {exc}") from None
    return policy.with_value(value_layers(arrays))


def card_spec(policy: NumpyPolicy) -> dict[str, Any]:
    """What a model card says of ``policy`` (its ``policy`` field): the actor's hidden sizes
    and activation and, for the kinds that read per-action inputs, the kind and the names of
    the columns it reads (an action view's, or the registered features')."""
    spec: dict[str, Any] = {"hidden": [int(w.shape[1]) for w, _ in policy.layers[:-1]],
                            "activation": policy.activation}
    kind = policy.arrays().get("kind")
    if kind is not None:
        spec["kind"] = str(kind)
    view = getattr(policy, "action_view", None)
    if view:
        spec.update(action_view=view, features=list(action_view_names(view)))
    elif isinstance(policy, ResidualPolicy):  # the registered features' kinds
        spec["features"] = list(REGISTRY.names[:policy.n_features])
    return spec
