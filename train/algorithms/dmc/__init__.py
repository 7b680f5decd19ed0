"""algo dmc: Deep Monte-Carlo, a round of the fast path's loop
(allfives_train.algorithms.ppo_batched.loop).
"""
