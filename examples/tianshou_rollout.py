"""All Fives through Tianshou 2.x's PettingZoo wrapper: whole games, masks honoured, and a few
DQN gradient steps for seat 0 (``pip install -e ".[tianshou]"``).

    python examples/tianshou_rollout.py --players 4 --games 8 --train-steps 5

Tianshou's ``PettingZooEnv`` takes ``allfives_env.env(...)``: it reads the ``observation`` and
``action_mask`` keys, needs the same spaces for every agent (true for every seat count) and
reports the env's per-step ``rewards`` as one vector per step. One Tianshou algorithm per seat
goes into ``MultiAgentOffPolicyAlgorithm``, and each learns only from the rows in which its
seat acted; so the env goes in :class:`allfives_env.envs.adapters.SettleTurns`, which pays each
seat on its own turns and gives every seat but the last mover one settling turn at the end:
without it a losing seat would never see its -1 (it is paid on the winner's row). The
masked random algorithm and DQN both honour ``obs.mask``.
:class:`allfives_env.envs.adapters.EpisodeLog` under the wrappers records what the env paid, to
compare with what Tianshou collected.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import torch
from tianshou.algorithm import (
    DQN,
    MARLRandomDiscreteMaskedOffPolicyAlgorithm,
    MultiAgentOffPolicyAlgorithm,
)
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.utils.net.common import Net
from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode

import allfives_env.env as allfives
from allfives_env.envs.adapters import EpisodeLog, SettleTurns


def make_env(players: int, reward: str = "win", settle: bool = True, **rules: Any
             ) -> PettingZooEnv:
    """The one line a Tianshou user needs (EpisodeLog is only for checking);
    ``settle=False`` shows what goes wrong without SettleTurns."""
    env = EpisodeLog(allfives.env(players=players, reward=reward, **rules))
    return PettingZooEnv(SettleTurns(env) if settle else env)


def make_algorithm(env: PettingZooEnv, hidden: int = 64) -> MultiAgentOffPolicyAlgorithm:
    """DQN for seat 0, masked random play for the other seats."""
    obs_size = env.observation_space["observation"].shape[0]
    net = Net(state_shape=obs_size, action_shape=env.action_space.n, hidden_sizes=[hidden])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space,
                                     eps_training=0.1, eps_inference=0.0)
    dqn = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.99,
              n_step_return_horizon=1, target_update_freq=0)
    others = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
              for _ in env.agents[1:]]
    return MultiAgentOffPolicyAlgorithm(algorithms=[dqn, *others], env=env)


def rollout(players: int, games: int, seed: int = 0, train_steps: int = 0, n_envs: int = 2,
            reward: str = "win", settle: bool = True, **rules: Any) -> dict[str, Any]:
    """Collect ``games`` whole games (then ``train_steps`` DQN updates). Returns the buffer's
    per-episode reward sums (all rows, and per seat its own rows), the envs' own logs, and
    the transitions' masks and actions."""
    torch.set_num_threads(1)
    np.random.seed(seed)
    torch.manual_seed(seed)
    envs = DummyVectorEnv([lambda: make_env(players, reward, settle, **rules)
                           for _ in range(n_envs)])
    envs.seed(seed)
    algorithm = make_algorithm(make_env(players, reward, settle, **rules))
    buffer = VectorReplayBuffer(total_size=20_000, buffer_num=n_envs)
    collector = Collector(algorithm, envs, buffer, exploration_noise=True)
    collector.reset()
    t0 = time.perf_counter()
    stats = collector.collect(n_episode=games)
    seconds = time.perf_counter() - t0
    losses = []
    with policy_within_training_step(algorithm.policy), torch_train_mode(algorithm):
        for _ in range(train_steps):
            losses.append(algorithm.update(buffer=buffer, sample_size=64))
    logs = [ep for log in envs.get_env_attr("env") for ep in log.episodes]
    return {"episodes": episode_sums(buffer), "own": own_row_sums(buffer), "logs": logs,
            "n_collected": stats.n_collected_episodes, "buffer": buffer, "losses": losses,
            "seconds": seconds}


def episode_sums(buffer: VectorReplayBuffer) -> list[np.ndarray]:
    """Per finished episode in the buffer (env by env, in order), the summed per-agent reward
    vectors. Each env has its own sub-buffer, filled from its start."""
    out = []
    for sub, lo in enumerate(buffer.subbuffer_edges[:-1]):
        acc = np.zeros(buffer.rew.shape[1])
        for i in range(lo, lo + len(buffer.buffers[sub])):
            acc = acc + buffer.rew[i]
            if buffer.done[i]:
                out.append(acc)
                acc = np.zeros(buffer.rew.shape[1])
    return out


def own_row_sums(buffer: VectorReplayBuffer) -> list[np.ndarray]:
    """Per finished episode, per seat the rewards of the rows in which that seat acted: what
    the seat's own algorithm learns from."""
    out = []
    for sub, lo in enumerate(buffer.subbuffer_edges[:-1]):
        acc = np.zeros(buffer.rew.shape[1])
        for i in range(lo, lo + len(buffer.buffers[sub])):
            seat = int(str(buffer.obs.agent_id[i]).rsplit("_", 1)[1])
            acc[seat] += buffer.rew[i][seat]
            if buffer.done[i]:
                out.append(acc)
                acc = np.zeros(buffer.rew.shape[1])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--train-steps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out = rollout(args.players, args.games, args.seed, args.train_steps)
    illegal = sum(log["illegal"] for log in out["logs"])
    print(f"{out['n_collected']} games collected in {out['seconds']:.1f}s, "
          f"{len(out['buffer'])} transitions, {illegal} illegal actions")
    for own, log in zip(out["own"], out["logs"], strict=False):
        print(f"  each seat's own rows {np.round(own, 3).tolist()}  env paid "
              f"{[round(v, 3) for v in log['returns'].values()]}  scores {log['scores']}")
    if out["losses"]:
        print(f"{len(out['losses'])} DQN updates done")


if __name__ == "__main__":
    main()
