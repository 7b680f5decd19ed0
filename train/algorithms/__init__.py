"""The algorithm plug-ins of the run shell, one room each: its trainer (named by its row of the
table, allfives_train.algos) and what only it uses. ppo_batched's room holds the fast path's
loop and network, which dmc's round runs in too; rllib_ppo's room is allfives_train.rllib.
"""
