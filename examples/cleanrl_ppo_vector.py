"""Masked PPO with a per-action scoring network, CleanRL style, on ``AllFivesVectorEnv``.

One file, read top to bottom, public API only (the VectorEnv, ``allfives.save_policy``),
torch and numpy. Each legal move gets its own score from the position (a torso over the
386-float observation) and the move's row of the action view (``--view``):

* ``raw``: no rows; the score of move ``a`` is output ``a`` of an MLP (a plain policy);
* ``facts``: what the move does by the rules (tile, end, points now, ends open after, ...);
* ``heuristic``: the hand-written heuristic's evaluation terms of the move.

``logits[a] = base(h)[a] + F[a] . (W h + w0) + relu(H h + G F[a] + c) . u`` with ``h`` the
torso's output and ``F[a]`` the move's row; the last three layers start at 0 (every legal move
equally likely), nothing is imitated. ``--save DIR`` writes a checkpoint ``ckpt:DIR`` plays::

    python examples/cleanrl_ppo_vector.py --view facts --save runs/ppo_facts
    allfives eval --agents ckpt:runs/ppo_facts heuristic --games 1000 --seed 20261308
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical

import allfives
from allfives_env.game.rules import make_rules
from allfives_train.games.vector_env import AllFivesVectorEnv

OBS, ACTIONS = 386, 140  # the flat observation's size, the actions (tile * 5 + end)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--view", choices=("raw", "facts", "heuristic"), default="facts")
    p.add_argument("--preset", default="all_fives")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--opponents", nargs="+", default=["heuristic"],
                   help="the pool, each ID or ID*WEIGHT: heuristic, greedy, random, "
                        "self (the current policy, sampling; raw and heuristic views)")
    p.add_argument("--total-steps", type=int, default=None,
                   help="learner steps (default: 1,500,000 for facts, 900,000 otherwise)")
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--num-steps", type=int, default=32, help="steps per env per rollout")
    p.add_argument("--hidden", type=int, default=128, help="torso width (two layers)")
    p.add_argument("--head", type=int, default=64, help="per-move hidden units")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--gamma", type=float, default=0.995)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--minibatches", type=int, default=4)
    p.add_argument("--update-epochs", type=int, default=3)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.003)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--eval-games", type=int, default=0,
                   help="games against heuristic at the end (argmax play; 0: none)")
    p.add_argument("--save", metavar="DIR", help="write the policy as a checkpoint here")
    p.add_argument("--cpu-seconds", type=float, default=None,
                   help="stop once this process has used this much CPU time (checked after "
                        "each update; the learning rate anneals over it)")
    p.add_argument("--snapshots", type=int, default=0, metavar="K",
                   help="with --cpu-seconds and --snapshot-dir: save the policy at K evenly "
                        "spaced fractions of the CPU budget")
    p.add_argument("--snapshot-dir", metavar="DIR",
                   help="snapshot k goes to DIR/snap_k (a ckpt: folder), a line per snapshot "
                        "to DIR/points.jsonl (steps, CPU and wall seconds)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="auto (cuda when available), cpu or cuda[:N]")
    args = p.parse_args(argv)
    if args.total_steps is None:
        args.total_steps = 1_500_000 if args.view == "facts" else 900_000
    return args


def make_envs(args: argparse.Namespace, n: int, opponents: list[str], seed: int
              ) -> AllFivesVectorEnv:
    pool = []
    for entry in opponents:
        agent, _, weight = entry.partition("*")
        pool.append({"agent": agent, "weight": float(weight or 1.0)})
    return AllFivesVectorEnv(make_rules(args.preset, players=args.players), num_envs=n,
                             seed=seed, opponents=pool, action_view=args.view)


def linear(n_in: int, n_out: int, bias: bool = True, zero: bool = False) -> nn.Linear:
    layer = nn.Linear(n_in, n_out, bias=bias)
    if zero:
        nn.init.zeros_(layer.weight)
    if bias:
        nn.init.zeros_(layer.bias)
    return layer


class Agent(nn.Module):
    """A per-action scorer (the actor) and a value network (the critic) on the observation."""

    def __init__(self, n_features: int, hidden: int, head: int) -> None:
        super().__init__()
        self.k = n_features
        self.torso = nn.Sequential(linear(OBS, hidden), nn.Tanh(), linear(hidden, hidden),
                                   nn.Tanh())
        self.base = linear(hidden, ACTIONS, zero=True)
        if n_features:
            self.feat = linear(hidden, n_features, zero=True)  # W h + w0: per-position weights
            self.head_h = linear(hidden, head)  # the per-move hidden layer: H h + G F[a] + c
            self.head_f = linear(n_features, head, bias=False)
            self.head_u = linear(head, 1, bias=False, zero=True)
        self.critic = nn.Sequential(linear(OBS, hidden), nn.Tanh(), linear(hidden, hidden),
                                    nn.Tanh(), linear(hidden, 1))

    def split(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The observation [B, 386] and the action rows [B, 140, K] of a flat input."""
        return x[:, :OBS], x[:, OBS:].reshape(len(x), ACTIONS, self.k)

    def logits(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The masked logits [B, 140]; the per-move terms are computed for legal moves only."""
        obs, rows = self.split(x)
        h = self.torso(obs)
        z = self.base(h)
        if self.k:
            legal = mask.float().topk(int(mask.sum(-1).max()), dim=-1).indices  # [B, L]
            f = rows.gather(1, legal[..., None].expand(-1, -1, self.k))  # [B, L, K]
            extra = (f * self.feat(h)[:, None, :]).sum(-1)
            extra = extra + self.head_u(torch.relu(self.head_h(h)[:, None, :]
                                                   + self.head_f(f))).squeeze(-1)
            z = z.scatter_add(1, legal, extra)
        return z.masked_fill(~mask, -1e8)

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x[:, :OBS]).squeeze(-1)

    def act(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        dist = Categorical(logits=self.logits(x, mask))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(x)

    def numpy_arrays(self, view: str) -> dict[str, np.ndarray]:
        """The network as ``policy.npz`` arrays (layers ``x @ w + b``), for ``set_self`` and
        ``save_policy``."""
        def wb(m: nn.Linear) -> tuple[np.ndarray, np.ndarray]:
            w = m.weight.detach().cpu().numpy().T.copy()
            b = m.bias.detach().cpu().numpy().copy() if m.bias is not None else np.zeros(w.shape[1])
            return w, b.astype(np.float32)

        out = {"activation": np.array("tanh")}
        (out["w0"], out["b0"]), (out["w1"], out["b1"]) = wb(self.torso[0]), wb(self.torso[2])
        out["wout"], out["bout"] = wb(self.base)
        c = [m for m in self.critic if isinstance(m, nn.Linear)]
        (out["vw0"], out["vb0"]), (out["vw1"], out["vb1"]) = wb(c[0]), wb(c[1])
        out["vwout"], out["vbout"] = wb(c[2])
        if self.k:
            out["kind"] = np.array(VIEW_KINDS[view])
            out["feat_w"], out["feat_b"] = wb(self.feat)
            out["head_h"], out["head_b"] = wb(self.head_h)
            out["head_f"] = wb(self.head_f)[0]
            out["head_u"] = wb(self.head_u)[0][:, 0].copy()
        return out


# the policy.npz kind of each view's network (the heuristic view is action_features/6's 17)
VIEW_KINDS = {"heuristic": "action_features_head/6", "facts": "action_view_head/facts"}


def evaluate(agent: Agent, args: argparse.Namespace, games: int, seed: int) -> float:
    """The win rate of the argmax policy over ``games`` games against ``heuristic``."""
    envs = make_envs(args, min(games, 256), ["heuristic"], seed)
    obs, infos = envs.reset(seed=seed)
    wins: list[bool] = []
    dev = next(agent.parameters()).device
    while len(wins) < games:
        with torch.no_grad():
            z = agent.logits(torch.from_numpy(obs).to(dev),
                             torch.from_numpy(infos["action_mask"]).to(dev))
        obs, _, _, _, infos = envs.step(z.argmax(-1).cpu().numpy())
        if "final_info" in infos:
            wins += infos["final_info"]["won"][infos["_final_info"]].tolist()
    return float(np.mean(wins[:games]))


def main(argv: list[str] | None = None) -> dict[str, float]:
    args = parse_args(argv)
    cuda = torch.cuda.is_available()
    if args.device not in ("auto", "cpu") and not (cuda and args.device.startswith("cuda")):
        raise SystemExit(f"--device {args.device}: use auto, cpu or cuda[:N] (cuda only "
                         f"where torch sees a GPU; here: {'yes' if cuda else 'no'})")
    dev = torch.device(("cuda" if cuda else "cpu") if args.device == "auto" else args.device)
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    envs = make_envs(args, args.num_envs, args.opponents, args.seed)
    n, steps = args.num_envs, args.num_steps
    width = envs.single_observation_space.shape[0]
    agent = Agent((width - OBS) // ACTIONS, args.hidden, args.head).to(dev)
    optim = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    obs_buf = torch.zeros((steps, n, width), device=dev)
    mask_buf = torch.zeros((steps, n, ACTIONS), dtype=torch.bool, device=dev)
    act_buf = torch.zeros((steps, n), dtype=torch.long, device=dev)
    logp_buf, rew_buf, done_buf, val_buf = (torch.zeros((steps, n), device=dev) for _ in range(4))
    obs, infos = envs.reset(seed=args.seed)
    next_obs = torch.from_numpy(obs).to(dev)
    next_mask = torch.from_numpy(infos["action_mask"]).to(dev)
    next_done = torch.zeros(n, device=dev)
    returns, wins, start = [], [], time.time()
    updates, saved = max(1, args.total_steps // (n * steps)), 0
    for update in range(updates):
        done = update / updates  # the fraction of the budget used: steps, or CPU time
        if args.cpu_seconds:
            done = max(done, min(1.0, time.process_time() / args.cpu_seconds))
        for g in optim.param_groups:  # linear learning-rate annealing
            g["lr"] = args.lr * (1.0 - done)
        if any(o.startswith("self") for o in args.opponents):
            envs.set_self(agent.numpy_arrays(args.view))
        for t in range(steps):  # ---- rollout
            obs_buf[t], mask_buf[t], done_buf[t] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logp, _, value = agent.act(next_obs, next_mask)
            act_buf[t], logp_buf[t], val_buf[t] = action, logp, value
            obs, reward, term, trunc, infos = envs.step(action.cpu().numpy())
            rew_buf[t] = torch.as_tensor(reward, dtype=torch.float32, device=dev)
            next_obs = torch.from_numpy(obs).to(dev)
            next_mask = torch.from_numpy(infos["action_mask"]).to(dev)
            next_done = torch.as_tensor(term | trunc, dtype=torch.float32, device=dev)
            if "final_info" in infos:  # games that ended this step (same-step autoreset)
                ended = infos["_final_info"]
                returns += infos["final_info"]["return"][ended].tolist()
                wins += infos["final_info"]["won"][ended].tolist()
        with torch.no_grad():  # ---- generalised advantage estimation
            next_value = agent.value(next_obs)
            adv = torch.zeros_like(rew_buf)
            last = torch.zeros(n, device=dev)
            for t in reversed(range(steps)):
                nonterminal = 1.0 - (next_done if t == steps - 1 else done_buf[t + 1])
                nv = next_value if t == steps - 1 else val_buf[t + 1]
                delta = rew_buf[t] + args.gamma * nv * nonterminal - val_buf[t]
                last = delta + args.gamma * args.gae_lambda * nonterminal * last
                adv[t] = last
            ret = adv + val_buf
        b_obs, b_mask = obs_buf.reshape(n * steps, width), mask_buf.reshape(n * steps, -1)
        b_act, b_logp = act_buf.reshape(-1), logp_buf.reshape(-1)
        b_adv, b_ret = adv.reshape(-1), ret.reshape(-1)
        size = n * steps // args.minibatches
        for _ in range(args.update_epochs):  # ---- PPO update
            for idx in torch.randperm(n * steps, device=dev).split(size):
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
        recent = returns[-500:]
        print(f"steps {done_steps:>9,}  min {(time.time() - start) / 60:5.2f}"
              f"  cpu min {time.process_time() / 60:5.2f}"
              f"  games {len(returns):>6}  mean return {np.mean(recent) if recent else 0:+.3f}"
              f"  win rate {np.mean(wins[-500:]) if wins else 0:.3f}", flush=True)
        cpu = time.process_time()
        while (args.snapshot_dir and args.cpu_seconds and saved < args.snapshots
               and cpu >= args.cpu_seconds * (saved + 1) / args.snapshots):
            saved += 1
            allfives.save_policy(agent.numpy_arrays(args.view),
                                     os.path.join(args.snapshot_dir, f"snap_{saved}"),
                                     preset=args.preset, players=args.players)
            with open(os.path.join(args.snapshot_dir, "points.jsonl"), "a") as fh:
                fh.write(json.dumps({"k": saved, "steps": done_steps, "cpu_s": cpu,
                                     "wall_s": time.time() - start, "time": time.time()}) + "\n")
        if args.cpu_seconds and cpu >= args.cpu_seconds:
            updates = update + 1
            break
    out = {"steps": float(updates * n * steps), "games": float(len(returns)),
           "win_rate": float(np.mean(wins[-500:])) if wins else 0.0,
           "minutes": (time.time() - start) / 60, "cpu_minutes": time.process_time() / 60}
    if args.eval_games:
        out["eval_win_rate"] = evaluate(agent, args, args.eval_games, args.seed + 1)
        print(f"against heuristic, {args.eval_games} games (argmax): "
              f"{out['eval_win_rate']:.3f}", flush=True)
    if args.save:
        allfives.save_policy(agent.numpy_arrays(args.view), args.save,
                             preset=args.preset, players=args.players)
        print(f"saved: ckpt:{args.save}", flush=True)
    return out


if __name__ == "__main__":
    main()
