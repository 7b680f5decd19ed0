"""Numpy policies over an action view (``action_view="facts"`` or ``"heuristic"``,
:mod:`allfives_env.action_views`): the ``policy.npz`` kinds of networks that read, beside the
386-float observation, the view's ``[140, F]`` rows of the seat to act.

Their input is the observation followed by the rows flattened (``[386 + 140 F]``, what the
flat envs hand out with that view); at play time
:func:`allfives_agents.action_features.policy_input` computes the rows from the seat's own
:class:`~allfives_env.view.SeatView`
(:func:`allfives_env.action_views.action_view_features`), and the batched bots from the
batched engine (``BatchedGames.action_features``). Kinds (``<v>``: ``facts`` or ``heuristic``):

``action_view_flat/<v>``
    an MLP over the whole flat input (``w0, b0, ..., wout, bout``, ``wout`` [H, 140]): an SB3
    ``MlpPolicy`` trained on ``allfives/AllFives-v0`` with that view, for instance.
``action_view_mlp/<v>``
    one small MLP scores every action from its own row: ``logits[a] = mlp(row[a])``, or with
    ``reads_obs`` true ``mlp(concat(observation, row[a]))`` (``w0`` [F or 386 + F, H] ...,
    ``wout`` [H, 1]). Rows of illegal actions are zero and masked out anyway.
``action_view/<v>``, ``action_view_head/<v>``
    the heuristic-residual actor (:class:`~allfives_agents.policy_numpy.ResidualPolicy`,
    arrays ``feat_w``, ``feat_b`` and, with a head, ``head_h``, ``head_f``, ``head_b``,
    ``head_u``) with the view's rows as its per-action features.

Each may carry a critic (``vw0 ... vbout``) over the 386-float observation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from allfives_agents.policy_numpy import HEAD_ARRAYS, NumpyPolicy, ResidualPolicy, value_layers
from allfives_env.action_views import ACTION_VIEWS, action_view_names
from allfives_env.observation import OBS_SIZE
from allfives_env.tiles import N_ACTIONS

FLAT, MLP, RESIDUAL, RESIDUAL_HEAD = ("action_view_flat", "action_view_mlp", "action_view",
                                      "action_view_head")
FORMS = (FLAT, MLP, RESIDUAL, RESIDUAL_HEAD)
VIEWS = tuple(v for v in ACTION_VIEWS if v != "raw")
#: Every kind of this module, e.g. ``action_view_mlp/facts``.
KINDS = tuple(f"{form}/{view}" for form in FORMS for view in VIEWS)


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
    """The policy of a ``policy.npz`` whose kind is one of :data:`KINDS`."""
    kind = str(arrays["kind"])
    form, _, view = kind.partition("/")
    if kind not in KINDS:
        raise ValueError(f"policy kind {kind!r} unknown: the action-view kinds are "
                         f"{', '.join(KINDS)}")
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
