"""The run shell of ``allfives train``: what every training run shares, whatever its
algorithm (the run folder, the stops, the step budget); each algorithm is a plug-in that
hands it its row of the table (train/algos.py) and a :class:`~allfives_train.shell.run.Plugin`.

* :mod:`allfives_train.shell.run`: the one run set-up (:func:`~allfives_train.shell.run.train`);
* :mod:`allfives_train.shell.budget`: the step budget, counted and rounded once;
* :mod:`allfives_train.shell.stopping`: Ctrl-C and SIGTERM.
"""
