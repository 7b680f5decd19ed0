"""``allfives train --algo rllib_ppo`` (the algorithm table's row of the RLlib backend; the old
``--backend rllib`` names it too) and ``python -m allfives_train.rllib``: multi-agent PPO on
Ray RLlib from a ``TrainConfig`` like every other algo, its own fields in the ``rllib``
section (train/rllib/section.py), every field overridable.

    allfives train --algo rllib_ppo                                 # configs/train/rllib.yaml
    allfives train --config configs/train/rllib_selfplay_4p.yaml --rllib-policy per_side
    allfives train --algo rllib_ppo --address auto --num-env-runners 16  # a running Ray cluster
    allfives train --algo rllib_ppo --run-dir runs/x --resume       # continue after a stop

The flags are ``allfives train``'s (train/cli.py): the game flags every command shares, the
shared fields (``--net-arch``, ``--seed`` ...), and the section's (``--iterations``,
``--rllib-policy`` ...). This module is the ``python -m`` entry point; the message after a
stop is :func:`allfives_train.rllib.run.interrupted_message`.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """``python -m allfives_train.rllib ARGS``: ``allfives train --algo rllib_ppo ARGS`` (the
    same parser and run, errors in one line, exit status 2)."""
    import argparse

    from allfives_env.inputs.trust import add_trust_argument, trusting
    from allfives_train import cli

    parser = argparse.ArgumentParser(prog="python -m allfives_train.rllib", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_arguments(parser)
    add_trust_argument(parser)
    args = parser.parse_args(["--algo", "rllib_ppo", *(sys.argv[1:] if argv is None else argv)])
    try:
        with trusting(args.trust_checkpoint):
            return cli.run(args)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
