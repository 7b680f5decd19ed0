"""Multi-agent PPO on Ray RLlib (the ``rllib`` extra): ``allfives train --backend rllib`` or
``python -m train.rllib``. See :mod:`train.rllib.cli` and docs/training.md."""
