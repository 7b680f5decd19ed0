"""``save_policy`` for networks over an action view (``facts``, ``heuristic``): per-action MLPs,
flat MLPs and the residual actor's arrays play, as ``ckpt:DIR``, the games of the live network
fed the seat's own view rows; the batched bot chooses what the scalar agent chooses."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import allfives
from allfives_agents.base import Agent, Obs, make_agent
from allfives_env.envs.action_views import action_view_features, action_view_names
from allfives_env.game.view import SeatView

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the shared helpers

torch = pytest.importorskip("torch")
nn = torch.nn
AGAINST = ["random", "greedy"]


class LiveNet(Agent):
    """The live torch network: its logits from the observation and the seat's view rows
    (what the AEC env's ``action_features`` holds), masked argmax."""

    def __init__(self, module: Any, view: str, form: str) -> None:
        super().__init__()
        self.module, self.view, self.form, self.name = module, view, form, "live"

    def act(self, obs: Obs, view: SeatView) -> int:
        return int(self.logits(obs, view).argmax())

    def logits(self, obs: Obs, view: SeatView) -> Any:
        """The masked logits of every action (illegal: -inf)."""
        rows = torch.as_tensor(action_view_features(view, self.view))
        o = torch.as_tensor(obs["observation"])
        with torch.no_grad():
            if self.form == "rows":
                z = self.module(rows)[:, 0]
            elif self.form == "obs+row":
                z = self.module(torch.cat([o.expand(140, -1), rows], 1))[:, 0]
            else:
                z = self.module(torch.cat([o, rows.ravel()])[None])[0]
        return z.masked_fill(~torch.as_tensor(obs["action_mask"]).bool(), -float("inf"))


class Checked(LiveNet):
    """The live network's move, with the saved policy's move at the same decision checked
    against it: the same action, or one whose live logit equals the best one (two ends of
    one tile can have equal rows, and then only rounding picks between them)."""

    def __init__(self, module: Any, view: str, form: str, saved: Agent) -> None:
        super().__init__(module, view, form)
        self.saved, self.decisions, self.ties = saved, 0, 0

    def act(self, obs: Obs, view: SeatView) -> int:
        z = self.logits(obs, view)
        best, chosen = int(z.argmax()), self.saved.act(obs, view)
        gap = float(z[best] - z[chosen])
        assert gap <= 1e-5 * max(1.0, abs(float(z[best]))), \
            f"saved policy chose {chosen}, live {best}: logits {z[chosen]} < {z[best]}"
        self.decisions += 1
        self.ties += chosen != best
        return best


def module_for(view: str, form: str, seed: int) -> Any:
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    f = len(action_view_names(view))
    n_in, n_out = {"rows": (f, 1), "obs+row": (386 + f, 1), "flat": (386 + 140 * f, 140)}[form]
    return nn.Sequential(nn.Linear(n_in, 24), nn.Tanh(), nn.Linear(24, 12), nn.Tanh(),
                         nn.Linear(12, n_out))


def figures(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {o: {k: v for k, v in row.items() if k != "a"}
            for o, row in result["results"].items()}


@pytest.mark.parametrize("view,form,players", [
    ("facts", "rows", 2), ("facts", "obs+row", 3), ("heuristic", "obs+row", 2),
    ("facts", "rows", 4), ("heuristic", "rows", 3), ("facts", "flat", 2)])
def test_view_networks_play_the_live_games(tmp_path: Path, view: str, form: str,
                                           players: int) -> None:
    module = module_for(view, form, seed=players)
    directory = allfives.save_policy(module, tmp_path / "c", players=players)
    card = allfives_env_card(directory)
    assert card["policy"]["action_view"] == view
    assert card["policy"]["kind"] == ("action_view_flat/" if form == "flat"
                                      else "action_view_mlp/") + view
    games = 4 if view == "heuristic" else 8  # its rows take a few plies each
    game = {"against": AGAINST, "games": games, "seed": 3, "players": players}
    checked = Checked(module, view, form, make_agent(f"ckpt:{directory}"))
    live = figures(allfives.evaluate(checked, **game))
    assert checked.decisions > 20 * games
    if not checked.ties:  # no tie broken otherwise: the very same games
        assert live == figures(allfives.evaluate(f"ckpt:{directory}", **game))


def allfives_env_card(directory: Path) -> dict[str, Any]:
    import json

    return json.loads((directory / "card.json").read_text())


def test_view_network_through_the_cli(tmp_path: Path) -> None:
    """The real ``allfives eval`` in a child process plays the live per-action network's games."""
    from test_save_policy import cli_eval

    module = module_for("facts", "obs+row", seed=9)
    directory = allfives.save_policy(module, tmp_path / "c", action_view="facts")
    live = allfives.evaluate(LiveNet(module, "facts", "obs+row"), against=AGAINST,
                                 games=12, seed=7)["results"]
    saved = cli_eval(directory, tmp_path)
    for opp in AGAINST:
        assert {k: v for k, v in live[opp].items() if k != "a"} == \
            {k: v for k, v in saved[opp].items() if k != "a"}


def residual_arrays(view: str, head: bool, seed: int = 0) -> dict[str, np.ndarray]:
    """The residual actor's arrays (examples/cleanrl_ppo_vector.py's layout), random."""
    rng = np.random.default_rng(seed)
    f, h, p = len(action_view_names(view)), 16, 8

    def r(*shape: int) -> np.ndarray:
        return (0.3 * rng.standard_normal(shape)).astype(np.float32)

    out = {"activation": np.array("tanh"), "w0": r(386, h), "b0": r(h), "w1": r(h, h),
           "b1": r(h), "wout": r(h, 140), "bout": r(140), "feat_w": r(h, f), "feat_b": r(f),
           "vw0": r(386, h), "vb0": r(h), "vwout": r(h, 1), "vbout": r(1),
           "kind": np.array(f"action_view{'_head' if head else ''}/{view}")}
    if head:
        out.update(head_h=r(h, p), head_b=r(p), head_f=r(f, p), head_u=r(p))
    return out


@pytest.mark.parametrize("head", [False, True])
def test_residual_arrays_compute_the_documented_logits(tmp_path: Path, head: bool) -> None:
    from allfives_agents.trained.checkpoint import load_checkpoint
    from allfives_agents.trained.save_policy import probe_inputs

    arrays = residual_arrays("facts", head)
    directory = allfives.save_policy(arrays, tmp_path / "r")
    _, _, policy = load_checkpoint(str(directory))
    x = probe_inputs("facts", games=1)
    obs, rows = x[:, :386], x[:, 386:].reshape(len(x), 140, -1)
    h = np.tanh(np.tanh(obs @ arrays["w0"] + arrays["b0"]) @ arrays["w1"] + arrays["b1"])
    want = h @ arrays["wout"] + arrays["bout"]
    want += np.einsum("naf,nf->na", rows, h @ arrays["feat_w"] + arrays["feat_b"])
    if head:
        pre = (h @ arrays["head_h"] + arrays["head_b"])[:, None, :] + rows @ arrays["head_f"]
        want += np.maximum(pre, 0.0) @ arrays["head_u"]
    np.testing.assert_allclose(policy.logits(x), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(policy.value(x), np.tanh(obs @ arrays["vw0"] + arrays["vb0"])
                               @ arrays["vwout"][:, 0] + arrays["vbout"][0], rtol=1e-4,
                               atol=1e-4)


def test_heuristic_view_kind_plays_as_the_action_features_kind(tmp_path: Path) -> None:
    """``action_view_head/heuristic`` reads the 17 features of ``action_features_head/6``."""
    arrays = residual_arrays("heuristic", head=True, seed=4)
    a = allfives.save_policy(arrays, tmp_path / "view")
    b = allfives.save_policy({**arrays, "kind": np.array("action_features_head/6")},
                                 tmp_path / "features")
    game = {"against": ["greedy"], "games": 10, "seed": 2}
    assert figures(allfives.evaluate(f"ckpt:{a}", **game)) == \
        figures(allfives.evaluate(f"ckpt:{b}", **game))


@pytest.mark.parametrize("view,form", [("facts", "obs+row"), ("heuristic", "flat")])
def test_batched_bot_chooses_what_the_scalar_agent_chooses(tmp_path: Path, view: str,
                                                           form: str) -> None:
    pytest.importorskip("numba")
    from test_batched_bots import _positions

    from allfives_agents.base import make_agent
    from allfives_agents.batched.bots import make_batched_bot
    from allfives_env.game.observation import observe
    from allfives_env.game.tiles import N_ACTIONS

    directory = allfives.save_policy(module_for(view, form, seed=1), tmp_path / "b")
    agent_id = f"ckpt:{directory}"
    bot, scalar = make_batched_bot(agent_id), make_agent(agent_id)
    same = total = 0
    for games, states, live in _positions("all_fives", 2, False, 400):
        got = bot.act(games, live)
        for j, b in enumerate(live):
            st = states[b]
            legal = st.legal_actions()
            mask = np.zeros(N_ACTIONS, dtype=np.int8)
            mask[legal] = 1
            obs = {"observation": observe(st, st.current, legal), "action_mask": mask}
            same += int(got[j] == scalar.act(obs, SeatView.of(st, st.current)))
            total += 1
    assert total >= 400 and same >= 0.995 * total  # float32 sums in another order


def test_sb3_on_a_view_env_plays_the_live_games(tmp_path: Path) -> None:
    sb3_contrib = pytest.importorskip("sb3_contrib")
    gymnasium = pytest.importorskip("gymnasium")
    env = gymnasium.make("allfives/AllFives-v0", opponents=["greedy"], action_view="heuristic")
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, seed=1, device="cpu",
                                    policy_kwargs={"net_arch": [16]})

    class LiveSB3(Agent):
        name = "live"

        def act(self, obs: Obs, view: SeatView) -> int:
            rows = action_view_features(view, "heuristic").ravel()
            flat = np.concatenate([obs["observation"], rows])
            action, _ = model.predict(flat, action_masks=obs["action_mask"].astype(bool),
                                      deterministic=True)
            return int(action)

    directory = allfives.save_policy(model, tmp_path / "sb3")
    assert allfives_env_card(directory)["policy"]["kind"] == "action_view_flat/heuristic"
    game = {"against": ["greedy"], "games": 8, "seed": 5}
    assert figures(allfives.evaluate(LiveSB3(), **game)) == \
        figures(allfives.evaluate(f"ckpt:{directory}", **game))


def test_what_a_view_network_cannot_be_is_refused_in_one_line(tmp_path: Path) -> None:
    def refused(policy: Any, match: str, **kw: Any) -> None:
        with pytest.raises(ValueError, match=match) as err:
            allfives.save_policy(policy, tmp_path / "never", **kw)
        assert "\n" not in str(err.value)

    refused(nn.Sequential(nn.Linear(20, 1)), "rows of 20 floats: no action view has them")
    refused(nn.Sequential(nn.Linear(48, 1)), "48 floats, but action_view='heuristic' has 17",
            action_view="heuristic")
    refused(nn.Sequential(nn.Linear(386, 140)),
            "action_view='facts', but .* reads the 386-float observation alone",
            action_view="facts")
    refused(nn.Sequential(nn.Linear(386, 2)), "maps 386 inputs to 2 outputs")
    refused(nn.Sequential(nn.Linear(48, 1)), "action_view='pixels': allowed values",
            action_view="pixels")
    bad = residual_arrays("facts", head=False)
    bad["feat_w"], bad["feat_b"] = bad["feat_w"][:, :10], bad["feat_b"][:10]
    refused(bad, "action view 'facts' has 62 columns")
    assert not (tmp_path / "never").exists()
    directory = allfives.save_policy(module_for("facts", "rows", 0), tmp_path / "c")
    from allfives_agents.base import make_agent

    with pytest.raises(ValueError, match="reads the action view 'facts'.*batched=0"):
        make_agent(f"search:net={directory},batched=1,sims=8")
    # the scalar search plays it (the network's rows from the seat's view)
    played = allfives.evaluate(f"search:net={directory},sims=4", against=["greedy"],
                                   games=2, seed=0)
    assert played["results"]["greedy"]["games"] == 2
