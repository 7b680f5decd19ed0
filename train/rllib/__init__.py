"""Multi-agent PPO on Ray RLlib (the ``rllib`` extra): ``allfives train --algo rllib_ppo`` or
``python -m allfives_train.rllib``. See :mod:`allfives_train.rllib.cli` and docs/training.md."""
