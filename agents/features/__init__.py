"""Per-action features: the registry that declares each feature once, the features themselves
(what the shipped models read) and the ``heuristic`` action view of the envs.
"""
