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

from allfives_env import moved

# rehome: keep (the table below names the old paths on purpose)
#: The old flat paths of train/'s modules (``allfives_train.vector_env`` ...) -> their rooms:
#: they still import, with a DeprecationWarning naming the new path
#: (:mod:`allfives_env.moved`).
MOVED: dict[str, str] = {
    "rundir": "shell.rundir",
    "manifest": "shell.manifest",
    "checkpoints": "shell.checkpoints",
    "progress": "shell.progress",
    "fast_hooks": "shell.hooks",
    "evaluation": "shell.evaluation",
    "preflight": "shell.preflight",
    "faults": "shell.faults",
    "plot": "shell.plot",
    "ppo": "algorithms.maskable_ppo.trainer",
    "callbacks": "algorithms.maskable_ppo.callbacks",
    "imitation": "algorithms.maskable_ppo.imitation",
    "sb3_export": "algorithms.maskable_ppo.sb3_export",
    "fastppo": "algorithms.ppo_batched.trainer",
    "fast_loop": "algorithms.ppo_batched.loop",
    "fast_net": "algorithms.ppo_batched.net",
    "precision": "algorithms.ppo_batched.precision",
    "dmc": "algorithms.dmc.trainer",
    "distill": "algorithms.search_distill.trainer",
    "distill_label": "algorithms.search_distill.label",
    "distill_label_batched": "algorithms.search_distill.label_batched",
    "ray_label": "algorithms.search_distill.ray_label",
    "vector_env": "games.vector_env",
    "vector_fallback": "games.vector_fallback",
    "rollouts": "games.rollouts",
    "workers": "games.workers",
    "shards": "games.shards",
    "ray_rollouts": "games.ray_rollouts",
    "single_agent": "games.single_agent",
    "registered": "games.registered",
    "opponents": "games.opponents",
    "compiling": "games.compiling",
    "bench": "benchmarks.bench",
    "speedrun": "benchmarks.speedrun",
    "speedrun_eval": "benchmarks.speedrun_eval",
    "curve": "benchmarks.curve",
}

moved.install(__name__, MOVED)
