"""Game records (``allfives-record/1``): writing, reading and replaying them, their strict
schema check, and ``allfives replay``.
"""
