"""The batched engine's state layout: the one interface through which numba code reads it.

:class:`allfives_env.batched_engine.games.BatchedGames` keeps B games as structure-of-arrays
(int64):

* ``G[b, F_*]``: per-game scalars;
* ``A[b, R_*, s]``: per-game 4-vectors, indexed by seat (hands, lacks) or side (scores);
* ``T[b, T_*, t]``: per-game 28-vectors, indexed by tile id;
* ``R[K_*]``: the rule set as ints (each option's code from
  :data:`allfives_env.batched_engine.rules.ENCODED`).

A bot's or a feature's kernel (the batched bots of agents/batched/) imports this module as
``L`` and reads ``G[b, L.F_CUR]``; numba freezes every name here as a constant of the compiled
code. Bots may read only what the acting seat may see:

Per-game scalars ``G`` (a seat may read all but the engine's bookkeeping):

* ``F_CUR`` the seat to act; ``F_LEADER`` the seat that led this hand; ``F_FORCED`` the
  double the leader must lead (-1: any);
* ``F_NARMS``, ``F_NPLAYED`` open arms of the layout and tiles on it; ``F_LEAD_TILE`` the
  first tile; ``F_SPINNER`` the spinner's tile (-1: none); ``F_SPIN_WAIT`` whether its side
  arms wait; ``F_PLAYED_M`` the tiles on the layout as a 28-bit mask;
* ``F_BONE_POS``, ``F_BONE_END``: the next boneyard tile's place in ``T_ORDER`` and where
  drawing stops (a seat may read only their difference, the tiles left to draw);
* ``F_HAND_OVER``, ``F_GAME_OVER``, ``F_WINNER`` (side), ``F_TRUNC`` (cut at ``max_hands``),
  ``F_LAST_DOM`` (who dominoed last hand), ``F_HAND_IDX``, ``F_GAMES`` (games started in the
  slot);
* the last step: ``F_HWINNER``, ``F_POINTS``, ``F_HAND_ENDED``, ``F_GAME_ENDED``,
  ``F_REASON`` (``REASON_*``);
* bookkeeping: ``F_EV_N``, ``F_DEV_N`` (event logs), ``F_NEED_DEAL``, ``F_EXT_LEADER``,
  ``F_DONE_LEADER`` (deals from outside), ``F_FIN_WINNER``, ``F_FIN_TRUNC`` (the finished game).

Per-game 4-vectors ``A``: ``R_HANDS`` each seat's hand as a 28-bit mask (a seat reads its
own row only); ``R_SCORES`` side scores; ``R_LACKS`` the suits each seat showed it lacks;
``R_ENDS``, ``R_DBL``, ``R_CNT`` per arm the open number, a double there, whether it counts;
``R_HPTS``, ``R_BEFORE``, ``R_FINAL``, ``R_DELTA`` the last hand's points and the scores
before the step, at the game's end and their change.

Per-game 28-vectors ``T``: ``T_PLAYED`` per tile the seat that played it (-1: not yet);
``T_ORDER``, ``T_DONE_ORDER`` the deal, hands then the boneyard in draw order (hidden: no
bot reads them).

``tests/test_batched_layout.py`` checks that no code outside the engine imports these names
from :mod:`allfives_env.batched_engine.kernels`.
"""

from __future__ import annotations

(F_CUR, F_LEADER, F_FORCED, F_NARMS, F_NPLAYED, F_LEAD_TILE, F_SPINNER, F_SPIN_WAIT,
 F_BONE_POS, F_BONE_END, F_HAND_OVER, F_GAME_OVER, F_WINNER, F_TRUNC, F_LAST_DOM, F_HAND_IDX,
 F_EV_N, F_DEV_N, F_HAND_ENDED, F_GAME_ENDED, F_REASON, F_HWINNER, F_POINTS, F_NEED_DEAL,
 F_EXT_LEADER, F_DONE_LEADER, F_GAMES, F_FIN_WINNER, F_FIN_TRUNC, F_PLAYED_M) = range(30)
NG = 30
R_HANDS, R_SCORES, R_LACKS, R_ENDS, R_DBL, R_CNT, R_HPTS, R_BEFORE, R_FINAL, R_DELTA = range(10)
NA = 10
T_PLAYED, T_ORDER, T_DONE_ORDER = range(3)
NT = 3
(K_PLAYERS, K_TEAMS, K_SIDES, K_HAND_SIZE, K_TARGET, K_IMMEDIATE, K_FIRST, K_NEXT, K_SPINNER,
 K_SUBTRACT, K_ROUND_TOTAL, K_RESERVE, K_MAX_HANDS, K_LOG, K_EXT, K_AUTORESET) = range(16)
NK = 16
LEADER_RANDOM, LEADER_HIGHEST_DOUBLE, LEADER_HAND_WINNER = 0, 1, 2
REASON_DOMINO, REASON_BLOCKED, REASON_TARGET = 0, 1, 2
EV_PLAY, EV_DRAW, EV_PASS = 0, 1, 2
MAX_EVENTS = 160
SPIN_NONE, SPIN_LEAD = -1, 4
