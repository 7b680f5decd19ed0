"""The learner's games: the single-agent env and its Gymnasium entry points, the batched
VectorEnv and its scalar fallback, the opponent pool, the rollout shards and the workers that
play them (local processes or Ray actors), and compiling the batched engine's kernels.
"""
