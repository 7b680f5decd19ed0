"""Which agents a web client may ask for: built-in bots and the server's own checkpoints.

A client names agents by id, but never a filesystem path and never a format that can carry
code. :class:`AgentGate` allows exactly:

* ``human`` (the person at the page);
* a registered bot by name with numeric or true/false options: ``random``, ``greedy``,
  ``heuristic``, ``search`` (``search:sims=200,depth=2``); ``search``'s ``net`` option names a
  checkpoint the same way ``ckpt:`` does (``search:net=all_fives_2p``; ``net=best``: the
  shipped model for the game's table);
* ``openspiel:ismcts`` and ``openspiel:mcts`` with their numeric options and
  ``eval=hand|random``, when ``open_spiel`` is installed (they read no file);
* ``ckpt:<name>`` (options ``sample``, ``temperature``), where ``<name>`` is a shipped model
  (its name or a former name, :mod:`allfives_agents.trained.models`; ``best``: the one for the
  game's
  table) or a model the operator named at start (``allfives serve --model NAME=PATH``). A
  checkpoint is ``card.json`` plus ``policy.npz`` read with ``allow_pickle=False``: data,
  never code.
* ``level:<name>``, a level (:mod:`allfives_agents.levels`: ``beginner`` ... ``strongest``): the
  agent that level plays at the game's table, made as if the client had named it (its id is
  the agent's name); a level that cannot play the table (``strongest`` where no shipped model
  does) is refused in one line naming the strongest level that can.

Everything else (``rllib:...``, ``ckpt:/a/path``, ``ckpt:../x``, other prefixes) is refused
with one line listing what is allowed. The id a client sent is the agent's name and goes into
the saved record (a level's: the id of the agent it plays); the server resolves checkpoint
names to its own paths.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from allfives_agents.base import Agent, AgentSpec, make_agent, registered_names
from allfives_agents.levels import PREFIX, agent_for, level_names
from allfives_agents.options import prefix_options, split_agent_id
from allfives_agents.trained.models import BEST, best_for
from allfives_env.game.rules import Rules

HUMAN = "human"
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
CKPT_OPTIONS = ("sample", "temperature")
OPENSPIEL_ALGORITHMS = ("ismcts", "mcts")
#: Options that may be a word: ``search``'s ``net`` (a checkpoint name, resolved by the server)
#: and OpenSpiel's ``eval``. Every other option value must be a number or true/false.
WORD_OPTIONS: dict[str, tuple[str, ...]] = {"search": ("net",), "openspiel": ("eval",)}


class AgentRefused(ValueError):
    """An agent id this server does not make (one line: what was wrong, what is allowed)."""


def shipped_checkpoints() -> dict[str, Path]:
    """The shipped models by name and by former name (``checkpoints/models.yaml``)."""
    from allfives_agents.trained.models import shipped_models

    out: dict[str, Path] = {}
    for model in shipped_models():
        if (model.directory / "card.json").is_file():
            for name in (model.name, *model.formerly):
                out[name] = model.directory.resolve()
    return out


def check_models(models: Mapping[str, str | Path]) -> dict[str, Path]:
    """The operator's ``--model NAME=PATH`` entries, each loaded once to check it (ValueError
    in one line for a bad name, a name taken by a shipped checkpoint, or a bad checkpoint)."""
    from allfives_agents.trained.checkpoint import load_checkpoint

    shipped = shipped_checkpoints()
    out: dict[str, Path] = {}
    for name, path in models.items():
        if not NAME_RE.match(name):
            raise ValueError(f"--model {name}=...: a model name is letters, digits, '_', '.' "
                             "and '-', starting with a letter or digit")
        if name in shipped or name == BEST:
            raise ValueError(f"--model {name}=...: {name!r} is a shipped model's name "
                             "already; give the model another name")
        directory, _, _ = load_checkpoint(str(path))  # card.json + policy.npz, data only
        out[name] = directory.resolve()
    return out


class AgentGate:
    """Makes the agents a client may ask for (see the module docstring)."""

    def __init__(self, models: Mapping[str, Path] | None = None) -> None:
        self.checkpoints = {**shipped_checkpoints(), **(models or {})}
        self.openspiel = importlib.util.find_spec("pyspiel") is not None

    def bots(self) -> list[str]:
        return registered_names()

    def ids(self) -> list[str]:
        """Every agent id a client may send, without options (``human`` aside)."""
        spiel = [f"openspiel:{a}" for a in OPENSPIEL_ALGORITHMS] if self.openspiel else []
        return self.bots() + spiel + [f"ckpt:{name}" for name in (BEST, *self.checkpoints)]

    def allowed(self) -> str:
        """What is allowed, in a few words for an error line."""
        spiel = "openspiel:ismcts|mcts, " if self.openspiel else ""
        names = ", ".join((BEST, *self.checkpoints))
        levels = ", ".join(level_names())
        return (f"allowed are {HUMAN}, {', '.join(self.bots())} (options as search:sims=200), "
                f"{spiel}level:<level> with <level> one of {levels}, and ckpt:<name> with "
                f"<name> one of {names}")

    def make(self, agent_id: Any, seed: int | None, rules: Rules | None = None) -> Agent:
        """The agent for ``agent_id`` (``ckpt:best`` is the shipped model for ``rules``), made
        by the one builder with this gate as its allow-list (:meth:`vet`);
        :class:`AgentRefused` (one line) for anything else."""
        if not isinstance(agent_id, str):
            raise AgentRefused(f"agent {agent_id!r}: an agent id is a string; {self.allowed()}")
        if split_agent_id(agent_id)[0] == PREFIX:
            return self.make(self._level(agent_id, rules), seed, rules)
        try:
            return make_agent(agent_id, seed, vet=lambda spec: self.vet(spec, rules))
        except AgentRefused:
            raise
        except Exception as exc:  # any failure to make it: one line, never a traceback
            line, who = _one_line(exc), f"agent {agent_id!r}"
            raise AgentRefused(line if line.startswith(who) else f"{who}: {line}") from None

    def vet(self, spec: AgentSpec, rules: Rules | None = None) -> AgentSpec:
        """The builder's allow-list: ``spec`` as the server builds it (checkpoint names
        resolved to its paths), or :class:`AgentRefused` naming what is allowed."""
        if spec.kind == "prefix" and spec.name == "ckpt":
            return self._checkpoint(spec, rules)
        if spec.kind == "prefix" and spec.name == "openspiel" and self.openspiel:
            return self._openspiel(spec)
        if spec.kind == "agent":
            options = self._options(spec.agent_id, spec.name, spec.options, rules=rules)
            return dataclasses.replace(spec, options=options)
        raise AgentRefused(self._refusal(spec.agent_id, spec.name))

    # ------------------------------------------------------------------ the kinds
    def _refusal(self, agent_id: str, prefix: str) -> str:
        if ":" in agent_id or "/" in agent_id:
            return (f"agent {agent_id!r} is refused: a client may name only built-in bots and "
                    f"this server's checkpoints, never a path or another format; "
                    f"{self.allowed()}")
        return f"unknown agent {prefix!r}: {self.allowed()}"

    def _level(self, agent_id: str, rules: Rules | None) -> str:
        """The agent id that ``level:<name>`` plays at this table (one line otherwise)."""
        if rules is None:
            raise AgentRefused(f"agent {agent_id!r}: a level needs the game's rules")
        try:
            return agent_for(agent_id, rules)
        except ValueError as exc:
            raise AgentRefused(f"agent {_short(agent_id)}: {_one_line(exc)}") from None

    def _checkpoint(self, spec: AgentSpec, rules: Rules | None) -> AgentSpec:
        """``ckpt:<name>[,options]`` with ``<name>`` replaced by this server's path of it."""
        ref, comma, opts = spec.rest.partition(",")
        if ref.strip() == BEST and rules is not None:
            ref = best_for(rules).name
        path = self.checkpoints.get(ref.strip())
        if path is None or "," in str(path):
            raise AgentRefused(f"agent {spec.agent_id!r} is refused: ckpt: takes the name of "
                               f"one of this server's checkpoints, never a path; "
                               f"{self.allowed()}")
        self._options(spec.agent_id, "ckpt", prefix_options("ckpt", spec.rest)[1], CKPT_OPTIONS)
        return dataclasses.replace(spec, rest=f"{path}{comma}{opts}")

    def _openspiel(self, spec: AgentSpec) -> AgentSpec:
        algorithm, options = prefix_options("openspiel", spec.rest)
        if algorithm not in OPENSPIEL_ALGORITHMS:
            raise AgentRefused(f"agent {spec.agent_id!r}: openspiel: algorithms are "
                               f"{', '.join(OPENSPIEL_ALGORITHMS)}; {self.allowed()}")
        self._options(spec.agent_id, "openspiel", options)
        return spec

    def _options(self, agent_id: str, kind: str, parsed: dict[str, Any],
                 known: tuple[str, ...] | None = None,
                 rules: Rules | None = None) -> dict[str, Any]:
        """The parsed options, checked: numbers and true/false, words only where
        :data:`WORD_OPTIONS` allows them, only the ``known`` keys when given; ``net`` becomes
        the server's path of that name (``net=best``: of the shipped model for ``rules``)."""
        options = dict(parsed)
        unknown = sorted(set(options) - set(known)) if known is not None else []
        if unknown:
            raise AgentRefused(f"agent {agent_id!r}: unknown option(s) {', '.join(unknown)}; "
                               f"{kind}: options are {', '.join(known or ())}")
        words = WORD_OPTIONS.get(kind, ())
        for key, value in options.items():
            if isinstance(value, str) and key in words:
                continue
            if not isinstance(value, (int, float)):  # bool is an int: true/false pass
                raise AgentRefused(f"agent {agent_id!r}: option {key}={_short(value)} must be "
                                   "a number or true/false")
        if "net" in options:
            name = str(options["net"]).strip()
            if name == BEST and rules is not None:
                try:
                    name = best_for(rules).name
                except ValueError as exc:
                    raise AgentRefused(f"agent {agent_id!r}: {_one_line(exc)}") from None
            path = self.checkpoints.get(name)
            if path is None:
                raise AgentRefused(f"agent {agent_id!r} is refused: net= takes the name of one "
                                   f"of this server's checkpoints, never a path; "
                                   f"{self.allowed()}")
            options["net"] = str(path)
        return options


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] if text else type(exc).__name__
