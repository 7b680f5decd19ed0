"""Training: ``allfives train``, one run shell with algorithm plug-ins.

* the table of algorithms (:mod:`allfives_train.algos`: ``maskable_ppo``, ``ppo_batched``,
  ``dmc``, ``search_distill``, ``rllib_ppo``; :func:`~allfives_train.algos.register` adds
  one), the config (:mod:`allfives_train.config`) and the command line
  (:mod:`allfives_train.cli`, :mod:`allfives_train.recipe`);
* the run shell (:mod:`allfives_train.shell`): what every run shares, whatever its algorithm
  (the run folder, its lock and manifest, resume, the step budget, the stops);
* the plug-ins: each algorithm's trainer, named by its row of the table;
* the learner's games (envs, rollouts, workers, opponent pools) and the benchmarks.

Importing this package imports nothing heavy: torch and SB3 are loaded only by the modules that
train.
"""
