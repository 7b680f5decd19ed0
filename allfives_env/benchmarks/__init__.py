"""``allfives bench``: engine and environment speed, the batched engine's rows, and the machine
a figure came from.
"""
