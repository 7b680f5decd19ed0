"""All Fives through TorchRL's PettingZoo wrapper: whole games with masked actions
(``pip install -e ".[torchrl]"``).

    python examples/torchrl_rollout.py --players 4 --games 2 --policy mlp
    python examples/torchrl_rollout.py --players 3 --per-seat-groups    # TorchRL's default groups

``PettingZooWrapper`` takes the env instance unchanged; ``use_mask=True`` is required for AEC
envs (its ``mask`` entry marks the seat to act). It moves the env's ``action_mask`` out of the
observation into ``(group, "action_mask")`` and into the action spec, so ``env.rand_action``
and a ``MaskedCategorical`` policy only pick legal actions. By default every seat is in one
group ``players`` (one shared network); TorchRL's own default, one group per seat, is
``--per-seat-groups``. Rewards are the env's per-step ``rewards`` at
``("next", group, "reward")``.
"""

from __future__ import annotations

import argparse
from typing import Any

import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torchrl.envs import PettingZooWrapper
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor

import allfives_env.env as allfives
from allfives_env.envs.adapters import EpisodeLog
from allfives_env.game.observation import OBS_SIZE
from allfives_env.game.tiles import N_ACTIONS

GROUP = "players"


def make_env(players: int, seed: int = 0, reward: str = "win", grouped: bool = True,
             **rules: Any) -> PettingZooWrapper:
    """The TorchRL env (EpisodeLog underneath only records what the env paid); ``grouped``:
    all seats in the group ``players``, else TorchRL's default of one group per seat."""
    inner = EpisodeLog(allfives.env(players=players, reward=reward, **rules))
    group_map = {GROUP: list(inner.possible_agents)} if grouped else None
    return PettingZooWrapper(env=inner, use_mask=True, seed=seed, group_map=group_map)


def make_policy(hidden: int = 64) -> ProbabilisticActor:
    """A shared MLP over every seat's observation, sampling from a masked categorical."""
    net = TensorDictModule(MLP(in_features=OBS_SIZE, out_features=N_ACTIONS, num_cells=[hidden]),
                           in_keys=[(GROUP, "observation", "observation")],
                           out_keys=[(GROUP, "logits")])
    return ProbabilisticActor(net, in_keys={"logits": (GROUP, "logits"),
                                            "mask": (GROUP, "action_mask")},
                              out_keys=[(GROUP, "action")], distribution_class=MaskedCategorical)


def play(env: PettingZooWrapper, policy: Any = None, max_steps: int = 20_000) -> TensorDict:
    """One whole game (``policy=None``: ``env.rand_action``, which honours the mask)."""
    with torch.no_grad():
        return env.rollout(max_steps=max_steps, policy=policy, break_when_any_done=True)


def rollout(players: int, games: int, seed: int = 0, policy: str = "random",
            reward: str = "win", grouped: bool = True, **rules: Any) -> dict[str, Any]:
    """Play ``games`` games; per game the TorchRL trajectory and the env's own log."""
    if policy == "mlp" and not grouped:
        raise ValueError("--policy mlp shares one network over the group 'players': "
                         "drop --per-seat-groups")
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    env = make_env(players, seed, reward, grouped, **rules)
    actor = make_policy() if policy == "mlp" else None
    trajectories = [play(env, actor) for _ in range(games)]
    return {"trajectories": trajectories, "logs": env._env.episodes, "env": env}


def check(td: TensorDict, group_map: dict[str, list[str]]) -> tuple[int, int, list[float]]:
    """(actions outside the acting seat's mask, seats acting, per-agent reward sums in the
    order of ``group_map``) of one trajectory."""
    illegal = acting_total = 0
    sums: list[float] = []
    for group in group_map:
        acting = td[group, "mask"]                   # [T, k]: is this seat to act
        legal = td[group, "action_mask"]             # [T, k, 140]
        action = td[group, "action"]                 # [T, k]
        chosen = legal.gather(-1, action.unsqueeze(-1)).squeeze(-1)
        illegal += int((acting & ~chosen).sum())
        acting_total += int(acting.sum())
        sums += td["next", group, "reward"].sum(0).squeeze(-1).tolist()
    return illegal, acting_total, sums


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--policy", choices=("random", "mlp"), default="random")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-seat-groups", action="store_true",
                        help="TorchRL's default grouping: one group per seat")
    args = parser.parse_args()
    out = rollout(args.players, args.games, args.seed, args.policy,
                  grouped=not args.per_seat_groups)
    for td, log in zip(out["trajectories"], out["logs"], strict=True):
        illegal, _, sums = check(td, out["env"].group_map)
        print(f"{td.shape[0]} steps, {illegal} illegal; torchrl rewards "
              f"{[round(v, 3) for v in sums]}, env paid "
              f"{[round(v, 3) for v in log['returns'].values()]}, scores {log['scores']}")


if __name__ == "__main__":
    main()
