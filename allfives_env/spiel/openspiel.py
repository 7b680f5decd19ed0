"""All Fives as an OpenSpiel game: importing this module registers ``allfives`` with pyspiel.

::

    import pyspiel
    import allfives_env.spiel.openspiel  # noqa: F401  (registers the game)

    game = pyspiel.load_game("allfives(players=4,teams=True,preset=five_up)")

Parameters are the rule options of docs/rules.md plus ``reward``; a parameter left at its
default keeps the preset's value (``hand_size=0``, ``target=0`` and the empty strings mean
"the preset's"); ``teams`` (default true) means teams wherever the seat count allows them,
i.e. with 4 players. The rules are built by :func:`allfives_env.game.rules.make_rules`, so a bad
value raises :class:`~allfives_env.game.rules.RulesError`. ``reward``: ``win`` (+1 for the
winning side's seats, -1 shared by the losers, 0 when truncated) or ``points`` (side score
minus the mean side score, over the target), as the env's ``reward`` option sums over a
game.

Chance nodes: the deal, one tile at a time (seat 0's tiles first; 28 outcomes at most), the
leader when the rules choose it at random (outcome = seat), and every draw (uniform over the
tiles not yet placed). Actions are the env's 140 ``tile * 5 + end``. The state machine is
:class:`allfives_env.spiel.openspiel_core.Match`, which drives the unchanged engine.

Observations: ``observation_tensor`` is the ``allfives-obs/1`` vector
(:func:`allfives_env.game.observation.observe`); ``information_state_tensor`` is that vector plus
the current hand's events in order (one 40-float slot each: kind play/draw/pass, seat, tile,
end; other seats' drawn tiles left blank). ``information_state_string`` is the whole game's
history as the player saw it (its own deals and draws, every play, other seats' draws as
``s+?``, passes, hand ends with scores).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from allfives_env.game.engine import GameState
from allfives_env.game.observation import OBS_SIZE, observe
from allfives_env.game.rules import DEFAULT_PRESET, OPTIONS, PRESETS, Rules, RulesError, make_rules
from allfives_env.game.tiles import (
    N_ACTIONS,
    N_ENDS,
    N_TILES,
    action_to_str,
    mask_to_tiles,
    tile_str,
)
from allfives_env.game.view import SeatView
from allfives_env.spiel.openspiel_core import (
    CHANCE,
    DEAL,
    LEADER,
    OVER,
    PHASES,
    PLAY,
    REWARDS,
    TERMINAL,
    Match,
    view_tokens,
)
from allfives_env.spiel.openspiel_resample import resample

GAME_NAME = "allfives"
#: The options whose parameter, left at its default (``0`` or ``""``), means the preset's value.
FROM_PRESET: frozenset[str] = frozenset(
    name for name, o in OPTIONS.items() if o.kind is str or o.per_players)
#: The game's parameters, from the rule declaration (:data:`allfives_env.game.rules.OPTIONS`):
#: every option, ``preset`` and ``reward``.
PARAMETERS: dict[str, Any] = {
    "preset": DEFAULT_PRESET,
    **{name: ("" if o.kind is str else 0) if name in FROM_PRESET else o.default
       for name, o in OPTIONS.items()},
    "teams": True, "reward": "win",
}
EVENT_SIZE = 3 + 4 + N_TILES + N_ENDS  # kind, seat, tile, end

GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="All Fives (Muggins, Five-Up) dominoes",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=PARAMETERS,
)


def rules_from_params(params: dict[str, Any]) -> tuple[Rules, str]:
    """(rules, reward) from OpenSpiel parameters (defaults meaning the preset's value)."""
    params = {**PARAMETERS, **params}
    reward = params["reward"]
    if reward not in REWARDS:
        raise RulesError(f"reward={reward!r}: allowed values are {', '.join(REWARDS)}")
    preset = params["preset"]
    if preset not in PRESETS:
        raise RulesError(f"unknown preset {preset!r}: presets are {', '.join(PRESETS)}")
    options = {name: params[name] for name in OPTIONS
               if name not in FROM_PRESET or params[name] != PARAMETERS[name]}
    options["teams"] = bool(params["teams"]) and params["players"] == 4
    return make_rules(preset, **options), reward


def max_hand_events(rules: Rules) -> int:
    """An upper bound on the plays, draws and passes of one hand."""
    plays = N_TILES - rules.boneyard_reserve
    draws = max(0, N_TILES - rules.players * rules.hand_size - rules.boneyard_reserve)
    return plays + draws + plays * (rules.players - 1)


class AllFivesGame(pyspiel.Game):
    """The OpenSpiel game; see the module docstring."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        self.rules, self.reward = rules_from_params(params or {})
        rules = self.rules
        plays = N_TILES - rules.boneyard_reserve
        if self.reward == "win":
            low, high = -1.0, 1.0
        else:  # a loose bound: every hand's points to one side, in play and at its end
            high = (rules.target + rules.max_hands * (plays * 60 + 170)) / rules.target
            low = -high
        info = pyspiel.GameInfo(
            num_distinct_actions=N_ACTIONS, max_chance_outcomes=N_TILES,
            num_players=rules.players, min_utility=low, max_utility=high, utility_sum=0.0,
            max_game_length=rules.max_hands * plays)
        super().__init__(GAME_TYPE, info, params or {})
        self.history_slots = max_hand_events(rules)

    def new_initial_state(self) -> AllFivesState:
        return AllFivesState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Any:
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        perfect_recall = iig_obs_type is None or iig_obs_type.perfect_recall
        return AllFivesObserver(self, perfect_recall)


class AllFivesState(pyspiel.State):
    """A game state: a thin wrapper around :class:`~allfives_env.spiel.openspiel_core.Match`."""

    def __init__(self, game: AllFivesGame) -> None:
        super().__init__(game)
        self._m = Match(game.rules, game.reward)

    @property
    def match(self) -> Match:
        return self._m

    def current_player(self) -> int:
        p = self._m.current_player()
        if p == CHANCE:
            return pyspiel.PlayerId.CHANCE
        return pyspiel.PlayerId.TERMINAL if p == TERMINAL else p

    def _legal_actions(self, player: int) -> list[int]:
        return self._m.legal_actions() if player == self._m.current_player() else []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        outcomes = self._m.chance_outcomes()
        p = 1.0 / len(outcomes)
        return [(o, p) for o in outcomes]

    def _apply_action(self, action: int) -> None:
        if self._m.current_player() == CHANCE:
            if action not in self._m.chance_outcomes():
                raise ValueError(f"chance outcome {action} is not possible here: "
                                 f"{self._m.chance_outcomes()}")
            self._m.apply_chance(action)
        else:
            self._m.apply_play(action)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return self._m.chance_string(action)
        return action_to_str(action)

    def is_terminal(self) -> bool:
        return self._m.phase == OVER

    def returns(self) -> list[float]:
        return self._m.returns()

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> Any:
        """A state in ``player_id``'s information state (see
        :mod:`allfives_env.spiel.openspiel_resample`)."""
        seed = int(probability_sampler() * (1 << 53))
        new = self.get_game().new_initial_state()
        new._m = resample(self._m, player_id, np.random.default_rng(seed))
        return new

    def record(self, agents: list[str] | None = None) -> dict[str, Any]:
        """The game's ``allfives-record/1`` record (``allfives_env.records.record.replay`` checks
        it)."""
        return self._m.record(agents)

    def __str__(self) -> str:
        m = self._m
        g = m.game
        head = f"phase {PHASES[m.phase]}"
        if m.phase in (DEAL, LEADER):
            return head + " dealt " + " | ".join(
                "".join(tile_str(t) for t in h) for h in m.dealing) + _scores(g)
        g = m.g
        hands = " | ".join("".join(tile_str(t) for t in mask_to_tiles(h)) for h in g.hands)
        played = ",".join(f"{t}:{s}" for t, s in enumerate(g.played_by) if s >= 0)
        return (f"{head} hand {g.hand_index} current {g.current} hands {hands} played "
                f"{played} ends {g.ends[:g.n_arms]} bone {len(m.bones.drawn)}/{m.bones.size}"
                f"{_scores(g)}")


def _scores(g: Any) -> str:
    return "" if g is None else f" scores {g.scores}"


class AllFivesObserver:
    """Tensors and strings for :class:`AllFivesState` (the PyObserver interface)."""

    def __init__(self, game: AllFivesGame, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        self.slots = game.history_slots if perfect_recall else 0
        self.tensor = np.zeros(OBS_SIZE + self.slots * EVENT_SIZE, np.float32)
        self.dict = {"observation": self.tensor[:OBS_SIZE],
                     "history": self.tensor[OBS_SIZE:].reshape(self.slots, EVENT_SIZE)}

    def set_from(self, state: AllFivesState, player: int) -> None:
        self.tensor.fill(0.0)
        m = state.match
        g = m.game
        if g is None:
            for t in (t for h in m.dealing[player:player + 1] for t in h):
                self.tensor[t] = 1.0
            return
        legal = g.legal_actions() if m.phase == PLAY and g.current == player else []
        self.tensor[:OBS_SIZE] = observe(g, player, legal)
        if self.slots:
            _write_history(self.dict["history"], g.log or [], player)

    def string_from(self, state: AllFivesState, player: int) -> str:
        m = state.match
        if self.perfect_recall:
            return m.info_string(player)
        g = m.game
        if g is None:
            return f"p{player} phase {PHASES[m.phase]}"
        hand = "".join(tile_str(t) for t in mask_to_tiles(g.hands[player]))
        played = ",".join(f"{t}:{s}" for t, s in enumerate(g.played_by) if s >= 0)
        return (f"p{player} phase {PHASES[m.phase]} hand{g.hand_index} current {g.current} "
                f"own {hand} played {played} ends {g.ends[:g.n_arms]} sizes "
                f"{[h.bit_count() for h in g.hands]} bone {len(g.boneyard) - g.bone_pos} "
                f"lacks {g.lacks} scores {g.scores}")


def _write_history(out: np.ndarray, log: list[tuple], player: int) -> None:
    for k, ev in enumerate(log[:len(out)]):
        row = out[k]
        kind = ("play", "draw", "pass").index(ev[0])
        row[kind] = 1.0
        row[3 + ev[1]] = 1.0
        if ev[0] == "play":
            row[7 + ev[2]] = 1.0
            row[7 + N_TILES + ev[3]] = 1.0
        elif ev[0] == "draw" and ev[1] == player:
            row[7 + ev[2]] = 1.0


pyspiel.register_game(GAME_TYPE, AllFivesGame)


# ---------------------------------------------------------------------- seats' views
_GAMES: dict[tuple[Rules, str], pyspiel.Game] = {}


def params_of(rules: Rules, reward: str = "win") -> dict[str, Any]:
    """The OpenSpiel parameters of ``rules`` (every option spelled out)."""
    out = dict(rules.to_dict())
    out.update(preset=rules.preset, reward=reward)
    return out


def game_for(rules: Rules, reward: str = "win") -> pyspiel.Game:
    """The loaded OpenSpiel game for ``rules`` (cached)."""
    key = (rules, reward)
    if key not in _GAMES:
        _GAMES[key] = pyspiel.load_game(GAME_NAME, params_of(rules, reward))
    return _GAMES[key]


def state_for_view(view: SeatView, rng: np.random.Generator, reward: str = "win",
                   world: GameState | None = None) -> AllFivesState:
    """An OpenSpiel state in ``view``'s information set, built from the view alone: the hidden
    tiles are a sample (``world``, or :meth:`SeatView.sample_state`), never the real ones.
    Its ``resample_from_infostate`` samples again from the view (see
    :mod:`allfives_env.spiel.openspiel_resample`), so search over it only uses what the seat saw."""
    if world is None:
        world = view.sample_state(rng)
    tokens = [[view_tokens(view if q == view.seat else SeatView.of(world, q))]
              for q in range(view.n)]
    state = game_for(view.rules, reward).new_initial_state()
    state._m = Match.from_world(world, reward, tokens)
    return state
