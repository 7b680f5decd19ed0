"""The ``allfives`` command line: one subcommand per module, imported only when used.

Each subcommand module exposes ``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

from allfives_env.trust import TRUSTING, add_trust_argument, trusting

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "simulate": ("allfives_agents.simulate", "play games between agents and write their records"),
    "replay": ("allfives_env.replay_cli", "show a recorded game hand by hand, and verify it"),
    "bench": ("allfives_env.bench", "measure engine and environment speed"),
    "eval": ("allfives_agents.evaluate",
             "round-robin tournament between agents, with intervals and Elo"),
    "play": ("allfives_agents.play", "play against bots in the terminal"),
    "models": ("allfives_agents.models", "list the shipped models: setting, strength, Elo, recipe"),
    "serve": ("allfives_agents.web.server", "play, watch and replay games in the browser"),
    "train": ("allfives_train.cli",
              "train an agent (MaskablePPO, the batched fast path, or RLlib)"),
}


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="allfives", description=__doc__.splitlines()[0], allow_abbrev=False
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = next((a for a in argv if not a.startswith("-")), None)
    for name, (module, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text, allow_abbrev=False)
        if name == wanted:  # import only the module that runs
            importlib.import_module(module).add_arguments(p)
            if name in TRUSTING:
                add_trust_argument(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    started = time.perf_counter()  # the command's start (train counts its wall time from here)
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    args.started = started
    if not args.command:
        parser.print_help()
        return 2
    module = importlib.import_module(SUBCOMMANDS[args.command][0])
    trust = args.command in TRUSTING and bool(getattr(args, "trust_checkpoint", False))
    try:
        with trusting(trust):  # only this flag turns it on; off for every other command
            return int(module.run(args) or 0)
    except (ValueError, OSError) as exc:  # bad input: one clear line, no traceback
        print(f"allfives {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: one line, the conventional status 128 + SIGINT
        print(f"\nallfives {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
