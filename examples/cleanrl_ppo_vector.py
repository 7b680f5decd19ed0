"""Masked PPO in the style of CleanRL's ``ppo.py``, trained on ``AllFivesVectorEnv``.

Outside code: it uses only the VectorEnv API (``reset``, ``step``, ``infos["action_mask"]``,
``set_self``), torch and numpy. Read it top to bottom::

    python examples/cleanrl_ppo_vector.py --total-steps 200000 --opponent greedy
    python examples/cleanrl_ppo_vector.py --opponent self      # self-play via set_self()
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical

from allfives_env.rules import make_rules
from allfives_train.vector_env import AllFivesVectorEnv


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", default="all_fives")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--opponent", default="greedy", help="greedy, heuristic, random or self")
    p.add_argument("--total-steps", type=int, default=200_000)
    p.add_argument("--num-envs", type=int, default=128)
    p.add_argument("--num-steps", type=int, default=64, help="steps per env per rollout")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.995)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--minibatches", type=int, default=4)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.Tanh())
    return nn.Sequential(*layers)


class Agent(nn.Module):
    def __init__(self, obs_size: int, n_actions: int) -> None:
        super().__init__()
        self.actor = mlp([obs_size, 256, 256, n_actions])
        self.critic = mlp([obs_size, 256, 256, 1])

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)

    def act(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        logits = self.actor(x).masked_fill(~mask, -1e8)
        dist = Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(x)

    def numpy_arrays(self) -> dict[str, np.ndarray]:
        """The actor in ``NumpyPolicy`` form (``x @ w + b``), for ``envs.set_self``."""
        linears = [m for m in self.actor if isinstance(m, nn.Linear)]
        out = {"activation": np.array("tanh")}
        for i, m in enumerate(linears):
            key = "out" if i == len(linears) - 1 else str(i)
            out[f"w{key}"] = m.weight.detach().numpy().T.copy()
            out[f"b{key}"] = m.bias.detach().numpy().copy()
        return out


def main(argv: list[str] | None = None) -> dict[str, float]:
    args = parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    envs = AllFivesVectorEnv(make_rules(args.preset, players=args.players),
                             num_envs=args.num_envs, seed=args.seed,
                             opponents=[{"agent": args.opponent, "weight": 1.0}])
    n, steps = args.num_envs, args.num_steps
    obs_size = envs.single_observation_space.shape[0]
    agent = Agent(obs_size, envs.single_action_space.n)
    optim = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    obs_buf = torch.zeros((steps, n, obs_size))
    mask_buf = torch.zeros((steps, n, envs.single_action_space.n), dtype=torch.bool)
    act_buf = torch.zeros((steps, n), dtype=torch.long)
    logp_buf, rew_buf, done_buf, val_buf = (torch.zeros((steps, n)) for _ in range(4))
    obs, infos = envs.reset(seed=args.seed)
    next_obs, next_mask = torch.from_numpy(obs), torch.from_numpy(infos["action_mask"])
    next_done = torch.zeros(n)
    returns, wins, start = [], [], time.time()
    updates = max(1, args.total_steps // (n * steps))
    for update in range(updates):
        for g in optim.param_groups:  # linear learning-rate annealing
            g["lr"] = args.lr * (1.0 - update / updates)
        if args.opponent == "self":
            envs.set_self(agent.numpy_arrays())
        for t in range(steps):  # ---- rollout
            obs_buf[t], mask_buf[t], done_buf[t] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logp, _, value = agent.act(next_obs, next_mask)
            act_buf[t], logp_buf[t], val_buf[t] = action, logp, value
            obs, reward, term, trunc, infos = envs.step(action.numpy())
            rew_buf[t] = torch.as_tensor(reward, dtype=torch.float32)
            next_obs = torch.from_numpy(obs)
            next_mask = torch.from_numpy(infos["action_mask"])
            next_done = torch.as_tensor(term | trunc, dtype=torch.float32)
            if "final_info" in infos:  # games that ended this step (same-step autoreset)
                ended = infos["_final_info"]
                returns += infos["final_info"]["return"][ended].tolist()
                wins += infos["final_info"]["won"][ended].tolist()
        with torch.no_grad():  # ---- generalised advantage estimation
            next_value = agent.value(next_obs)
            adv = torch.zeros_like(rew_buf)
            last = torch.zeros(n)
            for t in reversed(range(steps)):
                nonterminal = 1.0 - (next_done if t == steps - 1 else done_buf[t + 1])
                nv = next_value if t == steps - 1 else val_buf[t + 1]
                delta = rew_buf[t] + args.gamma * nv * nonterminal - val_buf[t]
                last = delta + args.gamma * args.gae_lambda * nonterminal * last
                adv[t] = last
            ret = adv + val_buf
        b_obs, b_mask = obs_buf.reshape(-1, obs_size), mask_buf.reshape(n * steps, -1)
        b_act, b_logp = act_buf.reshape(-1), logp_buf.reshape(-1)
        b_adv, b_ret = adv.reshape(-1), ret.reshape(-1)
        size = n * steps // args.minibatches
        for _ in range(args.update_epochs):  # ---- PPO update
            for idx in torch.randperm(n * steps).split(size):
                _, logp, entropy, value = agent.act(b_obs[idx], b_mask[idx], b_act[idx])
                ratio = (logp - b_logp[idx]).exp()
                a = b_adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip, 1 + args.clip))
                loss = (pg.mean() + args.vf_coef * ((value - b_ret[idx]) ** 2).mean()
                        - args.ent_coef * entropy.mean())
                optim.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optim.step()
        done_steps = (update + 1) * n * steps
        recent = returns[-200:]
        print(f"steps {done_steps:>9,}  learner steps/s {done_steps / (time.time() - start):>8,.0f}"
              f"  games {len(returns):>6}  mean return {np.mean(recent) if recent else 0:+.3f}"
              f"  win rate {np.mean(wins[-200:]) if wins else 0:.2f}", flush=True)
    return {"steps": float(updates * n * steps), "games": float(len(returns)),
            "win_rate": float(np.mean(wins[-200:])) if wins else 0.0}


if __name__ == "__main__":
    main()
