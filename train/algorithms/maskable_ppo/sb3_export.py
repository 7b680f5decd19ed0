"""Exporting a trained SB3 actor to the numpy policy that ``ckpt:`` agents play
(:class:`~allfives_agents.trained.policy_numpy.NumpyPolicy`, in the agents layer: playing needs no
torch)."""

from __future__ import annotations

from allfives_agents.trained.policy_numpy import NumpyPolicy

__all__ = ["from_sb3"]


def from_sb3(policy: object) -> NumpyPolicy:
    """Export the actor of an SB3 ``MlpPolicy``/``MaskableActorCriticPolicy`` (torch)."""
    import torch

    modules = list(policy.mlp_extractor.policy_net)  # type: ignore[attr-defined]
    linears = [m for m in modules if isinstance(m, torch.nn.Linear)]
    acts = {type(m).__name__ for m in modules if not isinstance(m, torch.nn.Linear)}
    activation = {"ReLU": "relu", "Tanh": "tanh"}.get(next(iter(acts), "ReLU"))
    if activation is None or len(acts) > 1:
        raise ValueError(f"cannot export activation(s) {sorted(acts)}: relu or tanh only")
    layers = [*linears, policy.action_net]  # type: ignore[attr-defined]
    with torch.no_grad():
        arrays = [(m.weight.detach().cpu().numpy().T.copy(), m.bias.detach().cpu().numpy().copy())
                  for m in layers]
    return NumpyPolicy(arrays, activation)
