"""How much of the student's gap to its teacher is the teacher's own noise? (issue 11)

Plays 2-seat all_fives games as ``allfives train`` labels them
(allfives_train.algorithms.search_distill.label.Labeller,
half the moves the teacher's, half the student's) and at every labelled decision asks a
second copy of the teacher, seeded differently, for its values too. Prints how often the two
copies' best moves agree, the regret of the second copy's choice under the first copy's
values, and the cross-entropy between their softmax(value) targets: the figures a perfect
student could reach against one noisy label. Run from the repository root:

    PYTHONPATH=. python experiments/distill/teacher_noise.py TEACHER STUDENT GAMES

e.g. ``search:net=experiments/checkpoints/distill2_all_fives_2p
experiments/checkpoints/distill2_all_fives_2p 3``.
"""

from __future__ import annotations

import sys

import numpy as np

from allfives_agents.trained.checkpoint import load_checkpoint
from allfives_env.game.match import Obs, play_game
from allfives_env.game.rules import make_rules
from allfives_env.game.view import SeatView
from allfives_train.algorithms.search_distill.label import Labeller, make_teacher


def softmax(v: np.ndarray) -> np.ndarray:
    e = np.exp(v - v.max())
    return e / e.sum()


def main(teacher: str, student: str, games: int) -> None:
    labeller = Labeller(7, teacher, load_checkpoint(student)[2], 0.5)
    other = make_teacher(teacher, 99)
    pairs: list[tuple[np.ndarray, np.ndarray]] = []
    label = labeller.act

    def act(obs: Obs, view: SeatView) -> int:
        n = len(labeller.rows["act"])
        move = label(obs, view)
        if len(labeller.rows["act"]) > n:  # a labelled decision: ask the second copy
            legal = list(view.legal)
            worlds = max(other.min_worlds, other.sims // len(legal))
            pairs.append((labeller.rows["val"][-1],
                          np.asarray(other.rollout_means(view, legal, worlds))))
        return move

    labeller.act = act  # type: ignore[method-assign]
    rules = make_rules("all_fives", players=2)
    for g in range(games):
        play_game(rules, [labeller, labeller], 1000 + g, log=False)
    agree = np.mean([np.argmax(a) == np.argmax(b) for a, b in pairs])
    regret = np.mean([a.max() - a[np.argmax(b)] for a, b in pairs])
    ce = np.mean([-(softmax(a) * np.log(softmax(b) + 1e-12)).sum() for a, b in pairs])
    entropy = np.mean([-(softmax(a) * np.log(softmax(a) + 1e-12)).sum() for a, _ in pairs])
    print(f"{teacher}: {len(pairs)} positions: agreement {agree:.3f}, regret {regret:.2f}, "
          f"cross-entropy {ce:.3f}, target entropy {entropy:.3f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
