"""Issue 50: one public API for other people's code (docs/environment.md, "Opponents,
evaluation and registered ids"): opponents in any AEC loop, evaluation from Python with the
CLI's numbers, ``level:NAME`` as an agent id everywhere, "did you mean", the Gymnasium ids and
the versioned module; and, slow, all of it from an installed wheel in a fresh venv."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pettingzoo.test as pzt
import pytest

import allfives_env
from allfives.cli import main as cli
from allfives_agents import Agent, make_agent, opponent
from allfives_agents.evaluation.report import summarize
from allfives_agents.public import evaluate
from allfives_env import allfives_v0, allfives_v1
from allfives_env.game.rules import make_rules
from allfives_env.game.view import SeatView

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "environment.md").read_text()
SECTION = DOC.split("## Opponents, evaluation and registered ids", 1)[1].split("\n## ", 1)[0]
EXAMPLES = re.findall(r"<!-- public-api-example -->\n```python\n(.*?)```", SECTION, re.S)


def first_legal(observation: np.ndarray, action_mask: np.ndarray) -> int:
    return int(action_mask.nonzero()[0][0])


def test_the_section_has_its_examples_marked() -> None:
    assert len(EXAMPLES) == 4
    assert len(re.findall(r"```python", SECTION)) == len(EXAMPLES)  # none left unmarked


@pytest.mark.parametrize("code", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_every_example_of_the_section_runs(code: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "docs/environment.md", "exec"), {"__name__": "doc"})  # noqa: S102


# ---------------------------------------------------------------------- opponents
def _play(env: Any, policies: dict[str, Any], seed: int) -> dict[str, float]:
    env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        policy = policies[agent]
        env.step(policy(agent) if hasattr(policy, "act")
                 else None if terminated or truncated else policy(**obs))
    return totals


@pytest.mark.parametrize("players", [2, 3])
def test_ckpt_best_and_level_easy_play_in_an_aec_loop(players: int) -> None:
    env = allfives_env.env(players=players)
    ids = ["ckpt:best", "level:easy"][:players - 1]
    policies: dict[str, Any] = {"player_0": first_legal}
    policies.update({f"player_{i + 1}": opponent(a, env) for i, a in enumerate(ids)})
    totals = _play(env, policies, seed=4)
    assert sum(totals.values()) == pytest.approx(0.0) and max(totals.values()) == 1.0
    assert not env.agents and "illegal_action" not in str(env.infos)


def test_the_shipped_model_beats_first_legal_through_the_public_loop() -> None:
    env = allfives_env.env(players=2)
    wins = sum(_play(env, {"player_0": first_legal, "player_1": opponent("ckpt:best", env)},
                     seed)["player_1"] > 0 for seed in range(6))
    assert wins >= 5  # a model that saw the wrong seat's view would not


class Spy(Agent):
    """Checks that it is handed only its own seat's view, and plays the first legal move."""

    def __init__(self, env: Any) -> None:
        super().__init__()
        self.env, self.seen = env, 0

    def act(self, obs: Any, view: SeatView) -> int:
        game = self.env.unwrapped.game
        seat = self.env.unwrapped.agent_seat[self.env.agent_selection]
        assert view.seat == seat == game.current and view.hand == game.hands[seat]
        assert np.array_equal(obs["action_mask"], self.env.observe(self.env.agent_selection)
                              ["action_mask"])
        self.seen += 1
        return view.legal[0]


def test_an_opponent_sees_only_its_own_seat() -> None:
    from allfives_agents.public import Opponent

    env = allfives_env.env(players=4)
    spy = Spy(env)
    policy = Opponent(spy, env)
    _play(env, dict.fromkeys(env.possible_agents, policy), seed=2)
    assert spy.seen > 20


def test_act_takes_what_the_env_hands_out_and_refuses_other_envs() -> None:
    env = allfives_env.env(players=2)
    policy = opponent("heuristic", seed=1)
    env.reset(seed=0)
    obs, *_ = env.last()
    assert obs["action_mask"][policy.act(obs, env)] == 1
    assert obs["action_mask"][policy.act(obs["observation"], env)] == 1  # the bare vector too
    with pytest.raises(ValueError, match="has no env"):
        policy("player_0")
    other = [a for a in env.agents if a != env.agent_selection][0]
    with pytest.raises(ValueError, match=f"{other} is not to act"):
        opponent("greedy", env)(other)
    with pytest.raises(ValueError, match="allfives AEC env"):
        policy.act(obs, object())


# ---------------------------------------------------------------------- evaluate
def test_evaluate_a_callable_against_heuristic_with_an_interval() -> None:
    result = evaluate(first_legal, against=["heuristic"], games=10, seed=3)
    row = result["results"]["heuristic"]
    assert row["games"] == 10 and row["a"] == "first_legal" and row["b"] == "heuristic"
    low, high = row["ci95"]
    assert 0.0 <= low <= row["win_rate"] <= high <= 1.0 and high - low > 0.1
    assert row["wins"] + row["losses"] + row["draws"] == 10


def test_evaluate_gives_the_numbers_of_allfives_eval(tmp_path: Path) -> None:
    out = tmp_path / "eval.json"
    assert cli(["eval", "--agents", "greedy", "level:medium", "--games", "6", "--seed", "11",
                "--workers", "1", "--no-progress", "--json", str(out)]) == 0
    mine = evaluate("greedy", against=["level:medium", "random"], games=6, seed=11)
    assert mine["results"]["level:medium"] == json.loads(out.read_text())["pairings"][0]
    assert mine["results"]["random"]["b"] == "random" and mine["seed"] == 11


def test_evaluate_refuses_bad_input_in_one_line() -> None:
    for kwargs, match in [({"policy": "heurstic"}, "did you mean 'heuristic'"),
                          ({"policy": first_legal, "against": []}, "list of agent ids"),
                          ({"policy": first_legal, "games": 0}, "games=0"),
                          ({"policy": 3}, "neither an agent id"),
                          ({"policy": first_legal, "seed": None}, "seed=None"),
                          ({"policy": first_legal, "against": ["level:strongest"],
                            "players": 4, "teams": False}, "unavailable at this table"),
                          ({"policy": lambda o, m: 0.5}, "integer action")]:
        with pytest.raises(ValueError, match=match):
            evaluate(**kwargs)


def test_summarize_needs_no_seed() -> None:
    assert summarize(make_rules(), ["a", "b"], [])["seed"] is None


# ---------------------------------------------------------------------- agent ids
def test_level_ids_work_in_eval_and_simulate(tmp_path: Path, capsys: Any) -> None:
    assert cli(["simulate", "--agents", "level:easy", "level:hard", "--games", "1",
                "--no-progress", "--out", str(tmp_path / "g.jsonl")]) == 0
    record = json.loads((tmp_path / "g.jsonl").read_text().splitlines()[0])
    assert "level:easy" in json.dumps(record)
    assert cli(["eval", "--agents", "level:strongest", "greedy", "--players", "4",
                "--no-teams", "--games", "2", "--no-progress", "--workers", "1"]) == 2
    assert "unavailable at this table" in capsys.readouterr().err


@pytest.mark.parametrize(("bad", "hint"), [("greedyy", "'greedy'"), ("serch:sims=5", "'search'"),
                                           ("ckp:best", "'ckpt'"), ("level:esay", "'easy'")])
def test_a_typo_gets_did_you_mean(bad: str, hint: str) -> None:
    with pytest.raises(ValueError, match=f"did you mean {hint}") as err:
        make_agent(bad)
    assert "\n" not in str(err.value)


def test_a_level_plays_its_agent_at_the_table() -> None:
    rules = make_rules()
    a, b = evaluate("level:easy", ["heuristic"], games=4, seed=2, rules=rules)["results"], \
        evaluate("greedy", ["heuristic"], games=4, seed=2, rules=rules)["results"]
    assert {k: v for k, v in a["heuristic"].items() if k != "a"} == \
        {k: v for k, v in b["heuristic"].items() if k != "a"}


# ---------------------------------------------------------------------- registered ids
def test_gymnasium_make_single_agent_with_opponents() -> None:
    env = gymnasium.make("allfives/AllFives-v0", opponents=["heuristic", "level:easy"],
                         players=3, margin_reward=0.0)
    assert env.unwrapped.rules.players == 3 and env.unwrapped.margin_reward == 0.0
    obs, info = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape and "seat" in info
    done, steps = False, 0
    while not done:
        legal = np.flatnonzero(env.unwrapped.action_masks())
        obs, reward, terminated, truncated, info = env.step(int(legal[0]))
        done, steps = terminated or truncated, steps + 1
    assert "won" in info and steps > 5
    with pytest.raises(ValueError, match="not an agent id"):
        gymnasium.make("allfives/AllFives-v0", opponents=[3])


def test_gymnasium_make_vec_builds_the_vector_env() -> None:
    pytest.importorskip("numba")
    envs = gymnasium.make_vec("allfives/AllFives-v0", num_envs=3, opponents=["greedy"])
    obs, infos = envs.reset(seed=0)
    assert obs.shape == (3, 386) and infos["action_mask"].shape == (3, 140)


def test_ids_work_without_importing_the_package_first() -> None:
    code = ("import sys, gymnasium\n"
            "e = gymnasium.make('allfives_env:allfives/AllFives-v0', opponents=['greedy'])\n"
            "e.reset(seed=0)\n"
            "import allfives_env, pettingzoo\n"
            "pettingzoo.make('aec', 'allfives_v1', players=2).reset(seed=0)\n"
            "print(type(e.unwrapped).__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "AllFivesSingleAgentEnv"


def test_importing_allfives_env_imports_no_agents() -> None:
    code = ("import sys, allfives_env\n"
            "assert not [m for m in sys.modules if m.startswith('allfives_agents')]\n"
            "assert allfives_env.opponent.__module__ == 'allfives_agents.public'\n"
            "assert allfives_env.make_agent('greedy').name == 'greedy'\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.mark.parametrize("module", [allfives_v0, allfives_v1])
def test_the_versioned_module_passes_api_test(module: Any) -> None:
    env = module.env(players=3)
    assert isinstance(module.raw_env(players=2), module.AllFivesEnv)
    assert env.metadata["name"] == module.__name__.rpartition(".")[2] == module.ENV_NAME
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Observation is not a NumPy array")
        warnings.filterwarnings("ignore", message="Observation space for each agent probably")
        pzt.api_test(env, num_cycles=1000)


def test_the_docs_state_the_versioning_rule() -> None:
    assert "raises the version" in SECTION and "allfives_v1" in SECTION


# ---------------------------------------------------------------------- from a wheel
USER_SCRIPT = '''
import sys
import numpy as np, gymnasium
import allfives, allfives_env
assert "torch" not in sys.modules, "the core needs no torch"
assert "site-packages" in allfives_env.__file__, allfives_env.__file__
env = allfives_env.env(players=3)
policies = {"player_1": allfives.opponent("ckpt:best", env),
            "player_2": allfives.opponent("level:easy", env)}
def mine(observation, action_mask):
    return int(action_mask.nonzero()[0][0])
env.reset(seed=5)
for agent in env.agent_iter():
    obs, reward, terminated, truncated, info = env.last()
    if agent in policies:
        env.step(policies[agent](agent))
    else:
        env.step(None if terminated or truncated else mine(**obs))
row = allfives.evaluate(mine, against=["heuristic"], games=4, seed=0)["results"]["heuristic"]
assert row["games"] == 4 and len(row["ci95"]) == 2
e = gymnasium.make("allfives_env:allfives/AllFives-v0", opponents=["heuristic"], players=2)
e.reset(seed=0)
e.step(int(np.flatnonzero(e.unwrapped.action_masks())[0]))
import train, agents
assert train.MINE and agents.MINE
print("public api ok", row["ci95"])
'''


@pytest.mark.slow
def test_the_public_api_from_an_installed_wheel(tmp_path: Path) -> None:
    """Build the wheel, install it (and the core dependencies only) in a fresh venv, and run a
    user's script from a folder holding its own ``train.py`` and ``agents/``."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    src = tmp_path / "src"
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_bytes((ROOT / name).read_bytes())
    run = _runner(tmp_path)
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path / "dist"), str(src)])
    (wheel,) = (tmp_path / "dist").glob("allfives-*.whl")
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    run([*pip, "--no-deps", str(wheel)])
    run([*pip, "-c", str(ROOT / "constraints.txt"), "numpy", "gymnasium", "pettingzoo",
         "pyyaml", "tqdm", "pillow"])
    user = tmp_path / "user"
    (user / "agents").mkdir(parents=True)
    (user / "train.py").write_text("MINE = True\n")
    (user / "agents" / "__init__.py").write_text("MINE = True\n")
    (user / "script.py").write_text(USER_SCRIPT)
    out = run([str(venv / "bin" / "python"), "script.py"], cwd=user)
    assert "public api ok" in out


def _runner(tmp_path: Path) -> Any:
    def run(cmd: list[str], cwd: Path = tmp_path) -> str:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{cmd[:4]}: {done.stderr[-2000:]}"
        return done.stdout

    return run
