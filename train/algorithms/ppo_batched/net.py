"""The fast learner's network: a masked actor and a separate critic, in torch.

The actor has the shape of SB3's ``MlpPolicy`` actor (hidden layers, then 140 logits), so
:meth:`ActorCritic.numpy_policy` exports it as the :class:`NumpyPolicy` that ``policy.npz``
holds and that ``ckpt:`` agents, snapshots and ``self`` opponents play.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import nn

from allfives_agents.trained.policy_numpy import NumpyPolicy, ResidualPolicy, ViewResidualPolicy
from allfives_env.game.observation import OBS_SIZE
from allfives_env.game.tiles import N_ACTIONS
from allfives_train.sections import ACTOR

if TYPE_CHECKING:
    from allfives_train.config import TrainConfig

_ACT = {"relu": nn.ReLU, "tanh": nn.Tanh}
MASKED = -1e9


def mlp(sizes: list[int], activation: str, out: int, gain: float) -> nn.Sequential:
    """Hidden layers ``sizes[1:]`` (orthogonal init, gain sqrt 2) and an output layer."""
    layers: list[nn.Module] = []
    for a, b in zip(sizes, sizes[1:], strict=False):
        layers += [_init(nn.Linear(a, b), np.sqrt(2)), _ACT[activation]()]
    layers.append(_init(nn.Linear(sizes[-1], out), gain))
    return nn.Sequential(*layers)


def _init(layer: nn.Linear, gain: float) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


class ActorCritic(nn.Module):
    """``logits(obs, mask)`` with illegal actions at -1e9, ``value(obs)``. With
    ``precision="bf16"`` the layers compute in bfloat16 (torch autocast; weights, gradients
    and outputs stay float32)."""

    def __init__(self, obs_size: int, n_actions: int, hidden: list[int], activation: str,
                 precision: str = "fp32") -> None:
        super().__init__()
        self.activation, self.bf16 = activation, precision == "bf16"
        self.actor = mlp([obs_size, *hidden], activation, n_actions, 0.01)
        self.critic = mlp([obs_size, *hidden], activation, 1, 1.0)

    def logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self._run(self.actor, obs).masked_fill(~mask, MASKED)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self._run(self.critic, obs).squeeze(-1)

    def _run(self, net: nn.Module, obs: torch.Tensor) -> torch.Tensor:
        with torch.autocast(obs.device.type, dtype=torch.bfloat16, enabled=self.bf16):
            return net(obs).float()

    def numpy_policy(self) -> NumpyPolicy:
        """The actor as a numpy policy (weights input-major, as ``policy.npz`` stores them),
        carrying the critic as its value (:meth:`NumpyPolicy.value`)."""
        return NumpyPolicy(numpy_layers(self.actor), self.activation).with_value(
            numpy_layers(self.critic))


class ResidualActorCritic(nn.Module):
    """The heuristic-residual actor (``policy: action_features``): a torso MLP on the
    observation gives ``h``; ``logits[a] = base(h)[a] + F[a] . (W h + w0)`` with ``F`` the
    per-action features (:mod:`allfives_agents.features.action_features`) that follow the
    observation in the
    input. ``w0`` starts at the heuristic's weights / ``temperature`` and ``W`` at 0, so the
    untrained actor samples softmax(heuristic value / temperature) and its argmax is the
    heuristic's move. The critic is an MLP on the observation. ``action_view``: ``F`` is
    that env action view's rows (its checkpoints are of kind ``action_view/<view>``); None:
    the registered features."""

    def __init__(self, obs_size: int, n_actions: int, hidden: list[int], activation: str,
                 n_features: int, w0: np.ndarray, temperature: float = 1.0,
                 action_view: str | None = None) -> None:
        super().__init__()
        self.activation, self.obs_size, self.action_view = activation, obs_size, action_view
        self.n_actions, self.n_features = n_actions, n_features
        self.torso = mlp([obs_size, *hidden], activation, n_actions, 0.01)
        self.feat = nn.Linear(hidden[-1], n_features)
        nn.init.zeros_(self.feat.weight)
        with torch.no_grad():
            self.feat.bias.copy_(torch.as_tensor(w0 / temperature, dtype=torch.float32))
        self.critic = mlp([obs_size, *hidden], activation, 1, 1.0)
        self.head: nn.ParameterDict | None = None

    def add_head(self, units: int) -> None:
        """A per-move MLP head, ``relu(h @ head_h + F[a] @ head_f + head_b) @ head_u`` added
        to every logit, with ``head_u`` at 0: the actor's play is unchanged until it trains."""
        hidden = self.feat.in_features
        g = torch.Generator().manual_seed(0)
        self.head = nn.ParameterDict({
            "head_h": nn.Parameter(torch.randn(hidden, units, generator=g) / hidden ** 0.5),
            "head_f": nn.Parameter(torch.randn(self.n_features, units, generator=g)),
            "head_b": nn.Parameter(torch.zeros(units)),
            "head_u": nn.Parameter(torch.zeros(units))})

    def widen_features(self, k: int) -> None:
        """Read the first ``k`` features (more than now): the new ones' weights start at 0
        (in ``feat`` and in the head), so the actor plays exactly as before until it trains."""
        old, n = self.feat, self.n_features
        self.feat = nn.Linear(old.in_features, k)
        with torch.no_grad():
            self.feat.weight.zero_()
            self.feat.bias.zero_()
            self.feat.weight[:n] = old.weight
            self.feat.bias[:n] = old.bias
            if self.head is not None:
                f = self.head["head_f"]
                self.head["head_f"] = nn.Parameter(torch.cat([f, f.new_zeros(k - n, f.shape[1])]))
        self.n_features = k

    def _split(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The actor's inputs: the observation and the per-action features (never the
        hidden values that may follow them)."""
        o, end = x[:, :self.obs_size], self.obs_size + self.n_actions * self.n_features
        return o, x[:, self.obs_size:end].reshape(len(x), self.n_actions, self.n_features)

    def logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        o, f = self._split(obs)
        h = self.torso[:-1](o)
        z = self.torso[-1](h) + torch.bmm(f, self.feat(h).unsqueeze(-1)).squeeze(-1)
        if self.head is not None:  # on the legal moves only (the rest are masked)
            p = self.head
            row, col = mask.nonzero(as_tuple=True)
            g = torch.relu((h @ p["head_h"])[row] + f[row, col] @ p["head_f"] + p["head_b"])
            z = z.index_put((row, col), g @ p["head_u"], accumulate=True)
        return z.masked_fill(~mask, MASKED)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(obs[:, :self.obs_size]).squeeze(-1)

    def numpy_policy(self) -> NumpyPolicy:
        """The actor as a :class:`ResidualPolicy` (``kind = "action_features/<v>"``, the
        feature set it reads), or over an action view a :class:`ViewResidualPolicy` (``kind =
        "action_view/<view>"``), carrying the critic as its value."""
        layers = numpy_layers(self.torso)
        with torch.no_grad():
            feat_w = self.feat.weight.detach().cpu().numpy().T.copy()
            feat_b = self.feat.bias.detach().cpu().numpy().copy()
            head = None if self.head is None else {
                k: v.detach().cpu().numpy().copy() for k, v in self.head.items()}
        if self.action_view is not None:
            return ViewResidualPolicy(layers, self.activation, feat_w, feat_b, self.action_view,
                                      head).with_value(numpy_layers(self.critic))
        return ResidualPolicy(layers, self.activation, feat_w, feat_b, head).with_value(
            numpy_layers(self.critic))


def numpy_layers(net: nn.Module) -> list[tuple[np.ndarray, np.ndarray]]:
    """The linear layers of an :func:`mlp` as numpy ``(w, b)``, weights input-major."""
    with torch.no_grad():
        return [(m.weight.detach().cpu().float().numpy().T.copy(),
                 m.bias.detach().cpu().float().numpy().copy())
                for m in net.modules() if isinstance(m, nn.Linear)]


def load_layers(net: nn.Module, layers: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """The inverse of :func:`numpy_layers`: ``layers`` into the linear layers of ``net``."""
    linears = [m for m in net.modules() if isinstance(m, nn.Linear)]
    with torch.no_grad():
        for m, (w, b) in zip(linears, layers):
            m.weight.copy_(torch.as_tensor(w.T))
            m.bias.copy_(torch.as_tensor(b))


AgentNet = ActorCritic | ResidualActorCritic  # what the fast path trains


def actor_from(policy: NumpyPolicy) -> ResidualActorCritic:
    """A torch :class:`ResidualActorCritic` holding ``policy``'s actor weights, and its value
    as the critic where it carries one of the critic's shape."""
    assert isinstance(policy, ResidualPolicy)
    hidden = [w.shape[1] for w, _ in policy.layers[:-1]]
    net = make_agent_net("action_features", policy.base_obs_size, policy.n_actions, hidden,
                         policy.activation, start="zero", n_features=policy.n_features,
                         action_view=getattr(policy, "action_view", None))
    assert isinstance(net, ResidualActorCritic)
    load_layers(net.torso, policy.layers)
    with torch.no_grad():
        net.feat.weight.copy_(torch.as_tensor(policy.feat_w.T))
        net.feat.bias.copy_(torch.as_tensor(policy.feat_b))
    if policy.head is not None:
        net.add_head(policy.head["head_b"].shape[0])
        assert net.head is not None
        with torch.no_grad():
            for k, v in policy.head.items():
                net.head[k].copy_(torch.as_tensor(v))
    if [w.shape for w, _ in policy.value_layers] == [w.shape for w, _ in
                                                      numpy_layers(net.critic)]:
        load_layers(net.critic, policy.value_layers)  # else the critic stays a fresh one
    return net


def make_agent_net(policy: str, obs_size: int, n_actions: int, hidden: list[int],
                   activation: str, precision: str = "fp32",
                   temperature: float = 1.0, start: str = "heuristic",
                   n_features: int | None = None, action_view: str | None = None
                   ) -> AgentNet:
    """``mlp``: :class:`ActorCritic`; ``action_features``: :class:`ResidualActorCritic`
    started at the heuristic (``obs_size`` is the observation's, without the features;
    it computes in fp32 whatever ``precision`` says; ``temperature``: points of heuristic
    value per unit of logit at the start; ``start="zero"``: feature weights at 0, no prior;
    ``n_features``: how many of ``FEATURES`` it reads, default the 9 of action_features/1;
    ``action_view``: it reads that view's columns instead, ``n_features`` ignored)."""
    if policy == "mlp":
        return ActorCritic(obs_size, n_actions, hidden, activation, precision)
    from allfives_agents.features.action_features import BASE_FEATURES, HEURISTIC_WEIGHTS

    k = BASE_FEATURES if n_features is None else n_features
    if action_view is not None:
        from allfives_env.envs.action_views import action_view_names

        k = len(action_view_names(action_view))
    w0 = HEURISTIC_WEIGHTS[:k] if start == "heuristic" else np.zeros(k, np.float32)
    return ResidualActorCritic(obs_size, n_actions, hidden, activation, k, w0, temperature,
                               action_view)


def sample(logits: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row from the softmax of ``logits`` (Gumbel-max: one pass, no loop);
    its uniforms drawn on the logits' device, from ``generator`` (default: torch's global
    one), which must live there too (:func:`generator_on`)."""
    check_generator(generator, logits.device)
    u = (torch.rand_like(logits) if generator is None else
         torch.rand(logits.shape, generator=generator, dtype=logits.dtype,
                    device=logits.device)).clamp_(1e-9, 1.0)
    return torch.argmax(logits - torch.log(-torch.log(u)), dim=-1)


def epsilon_greedy(agent: AgentNet, obs: torch.Tensor, mask: torch.Tensor, epsilon: float,
                   generator: torch.Generator | None = None) -> torch.Tensor:
    """Deep Monte-Carlo's acting (train/algorithms/dmc/trainer.py): the argmax legal move per row,
    or with
    probability ``epsilon`` a uniform legal one (drawn on ``obs``'s device from
    ``generator``, which must live there; default: torch's global one)."""
    check_generator(generator, obs.device)
    with torch.no_grad():
        greedy = agent.logits(obs, mask).argmax(-1)
        explore = torch.rand(len(obs), generator=generator, device=obs.device) < epsilon
        if bool(explore.any()):
            u = torch.rand(mask.shape, generator=generator,
                           device=obs.device).masked_fill(~mask, -1.0)
            greedy = torch.where(explore, u.argmax(-1), greedy)
    return greedy


def generator_on(device: torch.device, seed: int) -> torch.Generator:
    """A ``torch.Generator`` on ``device`` (where the draws it makes are used), seeded
    ``seed``; on the CPU the same stream as ``torch.Generator().manual_seed(seed)``."""
    return torch.Generator(device=device).manual_seed(seed)


def same_device(a: torch.device, b: torch.device) -> bool:
    """Whether ``a`` and ``b`` are one device (an index left out is the current one)."""
    if a.type != b.type:
        return False
    if a.type == "cpu" or a.index == b.index:
        return True
    current = torch.cuda.current_device() if a.type == "cuda" else 0
    return (current if a.index is None else a.index) == (current if b.index is None
                                                          else b.index)


def check_generator(generator: torch.Generator | None, device: torch.device) -> None:
    """Raise ValueError unless ``generator`` (None: torch's global one) lives on ``device``:
    a draw must be made where the tensors it feeds are."""
    if generator is not None and not same_device(generator.device, device):
        raise ValueError(f"a torch.Generator on {generator.device} draws for tensors on "
                         f"{device}: make it with generator_on({device.type!r}, seed)")


def log_prob_entropy(logits: torch.Tensor, actions: torch.Tensor
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probability of ``actions`` and the entropy over the legal actions. The
    probabilities come from ``softmax`` rather than ``logp.exp()``: the same values up to
    float rounding, but exp of the masked entries' -1e9 takes torch's slow underflow path (3x
    the time of the whole entropy term on a 4096 x 140 minibatch)."""
    logp = torch.log_softmax(logits, dim=-1)
    chosen = logp.gather(1, actions.unsqueeze(1)).squeeze(1)
    entropy = -(torch.softmax(logits, dim=-1) * logp).sum(-1)  # an illegal action: 0 * -1e9
    return chosen, entropy


def resolve_device(name: str) -> torch.device:
    """``cpu``, ``cuda`` or ``auto`` (cuda where one exists) -> a torch device."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("config device='cuda': no CUDA device is available here (torch "
                         f"{torch.__version__}); use cpu or auto")
    return torch.device(name)


def make_net(cfg: TrainConfig, precision: str | None = None) -> AgentNet:
    """The network ``cfg`` asks for, or ``init_from``'s actor with its value as the critic
    (a fresh critic where it carries none: :func:`actor_from`), with a ``move_head`` per-move
    head when asked and it has none, and widened to ``features`` when that is more than it
    reads. ``precision``: ``fp32`` or
    ``bf16`` (default: ``cfg.precision`` as :func:`choose_precision` resolves it on the CPU)."""
    from allfives_train.algorithms.ppo_batched.precision import choose_precision

    actor = cfg.section(ACTOR)
    if precision is None:
        precision = choose_precision(cfg.precision, torch.device("cpu"), actor.policy).precision
    if cfg.init_from:
        from allfives_agents.trained.checkpoint import load_checkpoint

        net: AgentNet = actor_from(load_checkpoint(cfg.init_from)[2])
    else:
        net = make_agent_net(actor.policy, OBS_SIZE, N_ACTIONS, list(cfg.net_arch),
                             cfg.activation, precision, actor.feature_temperature,
                             actor.feature_start, actor.features, actor.action_view)
    if actor.move_head and isinstance(net, ResidualActorCritic) and net.head is None:
        net.add_head(actor.move_head)
    if isinstance(net, ResidualActorCritic) and actor.features:
        if actor.features < net.n_features:
            raise ValueError(f"config features={actor.features}: init_from {cfg.init_from} "
                             f"reads {net.n_features} features; a checkpoint can be widened, "
                             "not narrowed (set features to null or at least that)")
        if actor.features > net.n_features:
            net.widen_features(actor.features)
    return net


def features_of(agent: AgentNet) -> int:
    """How many per-action features ``agent`` reads (0: the MLP actor, none)."""
    return agent.n_features if isinstance(agent, ResidualActorCritic) else 0
