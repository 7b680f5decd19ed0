"""The ``allfives`` command line (``[project.scripts] allfives = "allfives.cli:main"``).

Each subcommand lives in its own module, imported only when used; the module exposes
``add_arguments(parser)`` and ``run(args) -> int``. A misspelt flag is answered with the
nearest flag of that subcommand (``allfives train --total-step 1000``: "did you mean
--total-steps?"), exit status 2.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
import time

from allfives_env.inputs.trust import TRUSTING, add_trust_argument, trusting

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "simulate": ("allfives_agents.evaluation.simulate",
                 "play games between agents and write their records"),
    "replay": ("allfives_env.records.replay_cli",
               "show a recorded game hand by hand, and verify it"),
    "bench": ("allfives_env.benchmarks.bench", "measure engine and environment speed"),
    "eval": ("allfives_agents.evaluation.evaluate",
             "round-robin tournament between agents, with intervals and Elo"),
    "play": ("allfives_agents.play", "play against bots in the terminal"),
    "models": ("allfives_agents.trained.models",
               "list the shipped models: setting, strength, Elo, recipe"),
    "serve": ("allfives_agents.web.server", "play, watch and replay games in the browser"),
    "train": ("allfives_train.cli",
              "train an agent (no flags: the main job, configs/train/default.yaml)"),
}

#: A flag of a lower floor's subcommand that runs code of a higher floor: (command, the flag's
#: attribute) -> the module that runs the command when the flag is given. ``allfives bench
#: --train`` trains, so allfives_train runs it; allfives_env's bench only declares the flag.
HANDOFFS: dict[tuple[str, str], str] = {("bench", "train"): "allfives_train.benchmarks.speedrun"}

DESCRIPTION = "All Fives (Muggins) dominoes: play it, pit bots against each other, train agents."
EPILOG = """examples:
  allfives play                        play against the bots in the terminal
  allfives eval --agents heuristic search --games 200
  allfives models                      the shipped models and their strength
  allfives train                       the main job: train a model from nothing
  allfives COMMAND --help              the flags of one command"""


def version() -> str:
    """This install's version (the package's metadata; ``unknown`` when run from a bare
    source tree)."""
    from importlib import metadata

    try:
        return metadata.version("allfives")
    except metadata.PackageNotFoundError:
        return "unknown"


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="allfives", description=DESCRIPTION, epilog=EPILOG, allow_abbrev=False,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"allfives {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
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
    wanted = next((a for a in argv if not a.startswith("-")), None)
    unknown = unknown_flags(parser, wanted if wanted in SUBCOMMANDS else None, argv)
    if unknown:  # before argparse's own checks (a missing required flag, say)
        print(unrecognized(parser, wanted, unknown), file=sys.stderr)
        return 2
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # one line naming the nearest flag of that command
        print(unrecognized(parser, args.command, unknown), file=sys.stderr)
        return 2
    args.started = started
    if not args.command:
        parser.print_help()
        return 2
    module = importlib.import_module(command_module(args))
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


def command_module(args: argparse.Namespace) -> str:
    """The module that runs the parsed command: a handoff's where its flag is given."""
    for (command, flag), module in HANDOFFS.items():
        if args.command == command and getattr(args, flag, None) is not None:
            return module
    return SUBCOMMANDS[args.command][0]


def unrecognized(parser: argparse.ArgumentParser, command: str | None,
                 unknown: list[str]) -> str:
    """The error line for arguments the command does not take: for a flag, the nearest
    flag of that command (git's and cargo's "did you mean")."""
    prog = f"allfives {command}" if command else "allfives"
    target = _subparser(parser, command) or parser
    flags = [o for a in target._actions for o in a.option_strings if o.startswith("--")]
    first = unknown[0]
    name = first.split("=", 1)[0]
    if name.startswith("-"):
        near = difflib.get_close_matches(name, flags, n=1, cutoff=0.6)
        hint = (f"; did you mean {near[0]}?" if near else
                f"; `{prog} --help` lists the flags")
        return f"{prog}: error: unrecognized flag {name}{hint}"
    return (f"{prog}: error: unexpected argument {first!r}; `{prog} --help` says what it "
            "takes")


def unknown_flags(parser: argparse.ArgumentParser, command: str | None,
                  argv: list[str]) -> list[str]:
    """The ``--flags`` of ``argv`` (up to a bare ``--``) that neither ``command``'s parser
    nor the top-level one takes."""
    target = _subparser(parser, command) if command else None
    known = {o for p in (parser, target) if p is not None
             for a in p._actions for o in a.option_strings}
    out = []
    for arg in argv:
        if arg == "--":
            break
        if arg.startswith("--") and arg.split("=", 1)[0] not in known:
            out.append(arg)
    return out


def _subparser(parser: argparse.ArgumentParser, command: str | None
               ) -> argparse.ArgumentParser | None:
    """The parser of subcommand ``command`` (None without one)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command:
            found = action.choices.get(command)
            return found if isinstance(found, argparse.ArgumentParser) else None
    return None


if __name__ == "__main__":
    sys.exit(main())
