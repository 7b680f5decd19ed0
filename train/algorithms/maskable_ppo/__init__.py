"""algo maskable_ppo: sb3-contrib's MaskablePPO over scalar envs, with its SB3 callbacks, the
imitation warm start and the export of its actor to the numpy policy.
"""
