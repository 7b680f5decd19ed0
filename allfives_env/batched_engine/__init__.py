"""The batched engine (numba, the ``fast`` extra): B games stepped in one call (:mod:`.games`),
its state layout, its kernels, its encoding of the rules, a one-game state built from a seat's
view, and the ``facts`` action view for many games at once.
"""
