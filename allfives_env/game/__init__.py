"""The game itself: tiles and the action table, rule options and presets, one game's config,
layout arithmetic, the rules engine, what one seat sees, the observation layout, the one game
loop and the rule for seeds. No gymnasium, no pettingzoo, no numba, no torch.
"""
