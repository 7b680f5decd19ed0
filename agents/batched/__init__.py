"""The batched twins of the bots, the features and the searches (numba, the ``fast`` extra):
they decide for many games of a batched engine at once, and ``allfives simulate --engine
batched``.
"""
