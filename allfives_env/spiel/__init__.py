"""All Fives as an OpenSpiel game: the pyspiel registration, the state machine without pyspiel,
and sampling a world in one player's information state.
"""
