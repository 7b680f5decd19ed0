"""algo ppo_batched, the fast path: masked PPO in torch (trainer), the loop that the fast path's
algorithms share (loop: ppo_batched's and dmc's rounds), its network (net) and its arithmetic
(precision).
"""
