"""Training benchmarks: learner steps per second (bench), strength per minute of training
(speedrun, speedrun_eval: allfives bench --train) and a run's learning curve (curve).
"""
