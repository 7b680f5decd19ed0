"""What comes in from outside, checked: untrusted ``.npz`` and YAML, the trust switch behind
``--trust-checkpoint``, output paths, the shipped folders, and durations given on the command
line.
"""
