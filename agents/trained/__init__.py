"""Trained models: ``ckpt:`` agents played from numpy weights, the model card's checks, the
numpy actor networks, the shipped models by name, ``save_policy`` and ``rllib:`` agents.
"""
