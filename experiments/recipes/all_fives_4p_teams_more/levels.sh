#!/usr/bin/env bash
# Once the candidate met rule.md: its pairings in the 4-seat round robin (seed 20261130, 300
# games against every bot: the levels table and Elo), against oracle (seed 20261244, 400 games
# as the shipped model's) and against a greedy team on the fresh seed, into ship/ here
# (../levels.sh). From the repository root:
#   bash experiments/recipes/all_fives_4p_teams_more/levels.sh CANDIDATE
exec bash "$(dirname "$0")/../levels.sh" experiments/recipes/all_fives_4p_teams_more \
  "$1" 300 400 20261258 2000 --players 4 --teams
