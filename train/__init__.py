"""Training: ``allfives train`` (MaskablePPO self-play against an opponent pool, with an optional
imitation warm start), its single-agent env, numpy policies and checkpoints.

Importing this package imports nothing heavy: torch and SB3 are loaded only by the modules that
train (``allfives_train.ppo``, ``allfives_train.callbacks``, ``allfives_train.imitation``,
``allfives_train.bench``).
"""
