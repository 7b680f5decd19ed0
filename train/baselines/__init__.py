"""Reference learning curves of standard learners (``python -m allfives_train.baselines``).

:mod:`.learners` names the learners and their command lines, :mod:`.runner` runs one for a
budget of CPU time and keeps its snapshots, :mod:`.evalpoints` evaluates them,
:mod:`.report` makes the rows, the table and the figures, :mod:`.cli` is the command
(``add_arguments`` + ``run``, and ``main``).
"""

from allfives_train.baselines.cli import add_arguments, main, run

__all__ = ["add_arguments", "main", "run"]
