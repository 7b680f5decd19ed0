"""Hand-written bots: ``random`` and ``greedy``, ``heuristic`` (one-ply evaluation), ``oracle``
(search that sees every hand, a measuring stick) and the model of what the next seat's plays say
about its hand.
"""
