"""Search bots: ``search`` (determinized rollouts over sampled hidden hands), ``search:net=``
(guided by a trained policy), ``openspiel:`` (OpenSpiel's search bots), a move's deadline and
the per-slot random streams of the batched searches.
"""
