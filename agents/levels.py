"""Levels for people: named opponents from ``beginner`` to ``strongest``, each a registered
bot or the shipped model, with its measured strength.

``agents/levels.yaml`` (data only) declares the names, weakest first, what each agent does,
and for every setting with a shipped model a measured table: which agent plays each level
there (ordered by head-to-head results between neighbouring levels), each level's Elo over
``heuristic`` in one round robin, and each level's win rate against the level below, with the
seeds, dates and commands that measured them (for the shipped model, its row against that
agent in ``checkpoints/models.yaml``). At a table without a measured table the default
ladder plays, its strength "not measured". ``strongest`` plays the shipped model for the
rules in play (:func:`allfives_agents.trained.models.best_for`): ``ckpt:best``, or where measured
stronger the search with it inside, ``search:net=best,batched=1``; where no shipped model
plays the table (4 seats without teams) it is unavailable, and :func:`strongest_available`
is the level below.

    levels_for(make_rules("all_fives", players=2))     # [Level(beginner, random, ...), ...]
    resolve("hard", rules)                             # "search"
    agent_for("level:hard", rules)                     # "search"; other ids unchanged

``level:NAME`` is an agent id everywhere (``eval``, ``simulate``, ``play``, the server and
:func:`allfives_agents.base.make_agent`): a registered prefix whose agent plays the level's
agent for the rules of the game in play, found at its first move (as ``ckpt:best`` is).
``allfives play --level NAME`` and the browser (``level:NAME``) use them.
"""

from __future__ import annotations

import functools
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from allfives_agents.base import Agent, Obs, make_agent, register_prefix
from allfives_agents.options import did_you_mean
from allfives_agents.trained.models import BEST, best_for, find_model
from allfives_env.game.rules import Rules, make_rules
from allfives_env.game.view import SeatView

LEVELS_FILE = Path(__file__).with_name("levels.yaml")
PREFIX = "level"  # level:<name>, the id of a level where an agent id is expected
STRONGEST = "strongest"
BEST_ID = f"ckpt:{BEST}"


@dataclass(frozen=True)
class Level:
    """One level at one table: the agent it plays and what was measured of it there."""

    name: str
    agent: str
    description: str
    elo: float | None = None  # over heuristic, in the table's round robin
    step: dict[str, Any] | None = None  # win rate against the level below
    below: str = ""  # the level below (its name)
    measured_for: str = ""  # "all_fives, 2 seats" where measured, else ""
    source: dict[str, Any] = field(default_factory=dict)  # the round robin
    model: str = ""  # the shipped model ckpt:best resolves to at this table
    unavailable: str = ""  # why this level cannot play at this table ("" when it can)

    @property
    def id(self) -> str:
        return f"{PREFIX}:{self.name}"

    @property
    def available(self) -> bool:
        return not self.unavailable

    def strength_text(self) -> str:
        """The measured strength in one line (or why there is none)."""
        if self.elo is None:
            return "strength not measured at this table"
        parts = [f"{self.elo:+.0f} Elo over heuristic"]
        if self.step:
            s = self.step
            lo, hi = s["ci95"]
            level = "; level within the noise" if lo <= 0.5 <= hi else ""
            parts.append(f"wins {100 * s['win_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] "
                         f"of {s['games']:,} games against {self.below}{level}")
            if s.get("note"):
                parts.append(str(s["note"]))
        return "; ".join(parts) + f" ({self.measured_for})"

    def to_dict(self) -> dict[str, Any]:
        """As ``GET /api/meta`` lists it."""
        return {"name": self.name, "id": self.id, "agent": self.agent,
                "description": self.description, "model": self.model,
                "available": self.available, "unavailable": self.unavailable,
                "strength": self.strength(), "strength_text": self.strength_text()}

    def strength(self) -> dict[str, Any] | None:
        if self.elo is None:
            return None
        return {"elo_over_heuristic": self.elo, "vs_below": self.step, "below": self.below,
                "measured_for": self.measured_for, "round_robin": self.source}


# ------------------------------------------------------------------ the data file
@functools.lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    from allfives_env.inputs.safeyaml import load_yaml_file

    try:
        raw = load_yaml_file(LEVELS_FILE, "level list")
    except ValueError as exc:
        raise ValueError(f"the level list {str(LEVELS_FILE)!r} is unreadable: {exc}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("levels"), list):
        raise ValueError(f"the level list {str(LEVELS_FILE)!r} has no 'levels' list")
    names = raw["levels"]
    for table in [raw, *raw.get("tables", [])]:
        if sorted(table.get("ladder", {})) != sorted(names):
            raise ValueError(f"the level list {str(LEVELS_FILE)!r}: a ladder does not name "
                             f"exactly the levels {', '.join(names)}")
    return raw


def level_names() -> list[str]:
    """The level names, weakest first."""
    return list(_data()["levels"])


def measured_tables() -> list[dict[str, Any]]:
    """The measured tables as the data file holds them."""
    return list(_data().get("tables") or [])


def _table(rules: Rules) -> dict[str, Any] | None:
    for table in measured_tables():
        if (table["preset"], table["players"], table["teams"]) == (
                rules.preset, rules.players, rules.teams):
            return table
    return None


def _setting(table: dict[str, Any], rules: Rules) -> str:
    text = f"{table['preset']}, {table['players']} seats" + (" in teams" if table["teams"]
                                                              else "")
    own = make_rules(table["preset"], players=table["players"], teams=table["teams"])
    if rules.differences(own.to_dict()):
        return text + " under the preset's own rules, not these"
    return text


# ------------------------------------------------------------------ levels at a table
def levels_for(rules: Rules) -> list[Level]:
    """Every level at the table of ``rules``, weakest first."""
    data, table = _data(), _table(rules)
    ladder = (table or data)["ladder"]
    names = level_names()
    out = []
    for k, name in enumerate(names):
        agent = ladder[name]
        model, unavailable = _model(agent, rules)
        extra: dict[str, Any] = {}
        if table is not None:
            extra = {"elo": table["elo"][name],
                     "step": _step(table, name, agent, ladder[names[k - 1]] if k else ""),
                     "below": f"{names[k - 1]} ({ladder[names[k - 1]]})" if k else "",
                     "measured_for": _setting(table, rules),
                     "source": dict(table["round_robin"])}
        out.append(Level(name=name, agent=playable(agent), description=data["agents"][agent],
                         model=model, unavailable=unavailable, **extra))
    return out


def playable(agent: str) -> str:
    """``agent`` as this installation plays it: ``batched=1`` needs numba (the ``fast`` and
    ``train`` extras); without it the same search runs unbatched, the same player about 7
    times slower (114 ms a move in 2 seats here), rather than no player at all."""
    options = agent.split(",")
    if "batched=1" not in options or _has_numba():
        return agent
    return ",".join(o for o in options if o != "batched=1")


def _has_numba() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):  # ValueError: sys.modules["numba"] is None
        return False


def _step(table: dict[str, Any], name: str, agent: str,
          below: str) -> dict[str, Any] | None:
    """A level's win rate against the agent of the level below (``below``, "" for none):
    the table's, or for the shipped model its row in ``checkpoints/models.yaml`` against
    that agent (one place for it)."""
    step = (table.get("steps") or {}).get(name)
    model = find_model(table.get("model", "")) if agent == BEST_ID and below else None
    if model is None:
        return step
    row = model.win_rate(below)
    return None if row is None else {**row, **(step or {})}


def plays_best(agent: str) -> bool:
    """Whether ``agent`` plays the shipped model for the rules in play: ``ckpt:best`` or
    a search with it inside (``search:net=best,...``)."""
    prefix, _, rest = agent.partition(":")
    if agent.split(",")[0] == BEST_ID:
        return True
    return prefix == "search" and "net=best" in [o.strip() for o in rest.split(",")]


def naming_model(agent: str, rules: Rules) -> str:
    """``agent`` with ``best`` replaced by the shipped model for ``rules`` (``ckpt:best`` ->
    ``ckpt:five_up_2p``, ``search:net=best,...`` -> ``search:net=five_up_2p,...``); a
    one-line ValueError where no shipped model plays the table; other ids unchanged."""
    if not plays_best(agent):
        return agent
    name = best_for(rules).name
    prefix, _, rest = agent.partition(":")
    head, *options = [o.strip() for o in rest.split(",")]
    if prefix.strip() == "ckpt":
        return ",".join([f"ckpt:{name}", *options])
    options = [f"net={name}" if o == "net=best" else o for o in [head, *options]]
    return f"{prefix}:" + ",".join(options)


def _model(agent: str, rules: Rules) -> tuple[str, str]:
    """(the shipped model ``agent`` plays, or ""; why it cannot play here, or "")."""
    if not plays_best(agent):
        return "", ""
    try:
        return best_for(rules).name, ""
    except ValueError as exc:
        return "", str(exc)


def find(name: str, rules: Rules) -> Level:
    """The level called ``name`` at this table; ValueError (one line) for an unknown name."""
    for level in levels_for(rules):
        if level.name == name:
            return level
    raise ValueError(f"unknown level {name!r}{did_you_mean(name, level_names())}: levels are "
                     f"{', '.join(level_names())} (weakest first)")


def strongest_available(rules: Rules) -> Level:
    """The strongest level that can play this table."""
    return [level for level in levels_for(rules) if level.available][-1]


def resolve(name: str, rules: Rules) -> str:
    """The agent id of level ``name`` at this table; ValueError (one line) when the name is
    unknown or the level cannot play this table."""
    level = find(name, rules)
    if not level.available:
        here = strongest_available(rules)
        raise ValueError(f"level {name} is unavailable at this table: {level.unavailable}; "
                         f"the strongest level here is {here.name} ({here.agent})")
    return level.agent


def agent_for(agent_id: str, rules: Rules) -> str:
    """``level:NAME`` -> that level's agent id at this table; any other id unchanged."""
    prefix, sep, rest = agent_id.partition(":")
    if not sep or prefix.strip() != PREFIX:
        return agent_id
    name, comma, _ = rest.partition(",")
    if comma:
        raise ValueError(f"agent {agent_id!r}: a level takes no options (level:NAME, NAME one "
                         f"of {', '.join(level_names())})")
    return resolve(name.strip(), rules)


# ------------------------------------------------------------------ the level: prefix
class LevelAgent(Agent):
    """``level:NAME``: plays the agent of level NAME at the table of the game in play (built
    at its first move there, from the view's rules, and kept per table)."""

    def __init__(self, level: str, seed: int | None = None) -> None:
        super().__init__(seed)
        if level not in level_names():
            raise ValueError(f"unknown level {level!r}{did_you_mean(level, level_names())}: "
                             f"levels are {', '.join(level_names())} (weakest first)")
        self.level, self.seed = level, seed
        self._agents: dict[tuple, Agent] = {}

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if seed is not None:
            self.seed = seed
        for agent in self._agents.values():
            agent.reset(seed)

    def for_rules(self, rules: Rules) -> Agent:
        """The agent this level plays at ``rules``' table (one-line ValueError when the level
        cannot play there)."""
        agent = self._agents.get(rules.key)
        if agent is None:
            agent = self._agents[rules.key] = make_agent(resolve(self.level, rules), self.seed)
        return agent

    def act(self, obs: Obs, view: SeatView) -> int:
        return self.for_rules(view.rules).act(obs, view)


def _load(rest: str, seed: int | None) -> Agent:
    name, comma, _ = rest.partition(",")
    if comma or not name.strip():
        raise ValueError(f"agent 'level:{rest}': a level is level:NAME, no options, NAME one "
                         f"of {', '.join(level_names())}")
    return LevelAgent(name.strip(), seed)


register_prefix(PREFIX, _load)


# ------------------------------------------------------------------ for people
def _short(agent: str) -> str:
    """An agent id short enough for a column of the levels table."""
    return "search+model" if plays_best(agent) and agent.startswith("search") else agent


def help_text() -> str:
    """The levels at every measured table, for ``allfives play --help`` (under 100 columns)."""
    data, tables, names = _data(), measured_tables(), level_names()
    heads = [f"{t['preset']} {t['players']}" + ("t" if t["teams"] else "") for t in tables]
    lines = ["levels (--level NAME; weakest first; agent and Elo over heuristic, measured at "
             "each table):",
             ("  " + f"{'':<10}" + "".join(f"{h:<19}" for h in heads)).rstrip()]
    for name in names:
        cells = [f"{_short(t['ladder'][name])} {t['elo'][name]:+d}" for t in tables]
        lines.append(("  " + f"{name:<10}" + "".join(f"{c:<19}" for c in cells)).rstrip())
    default = ", ".join(data["ladder"][name] for name in names)
    lines.extend(textwrap.wrap(f"(4t: 4 seats in teams; any other table plays {default}, "
                               "not measured)", 98, initial_indent="  ",
                               subsequent_indent="   "))
    for agent, text in data["agents"].items():
        head = agent if _short(agent) == agent else f"{_short(agent)} ({agent})"
        lines.extend(textwrap.wrap(f"{head}: {text}", 98, initial_indent="  ",
                                   subsequent_indent="    "))
    lines.append(f"The default is {STRONGEST} (the shipped model, alone or inside search). "
                 "Where no shipped model")
    lines.append("plays the table (4 seats without teams) it is the strongest level that can "
                 "play. Seeds, dates,")
    lines.append("commands: agents/levels.yaml.")
    return "\n".join(lines)
