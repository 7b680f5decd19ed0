"""Docs that cannot drift: every fenced code block of the README and of the site's pages
(docs/*.md) is checked here, and each check says what it does.

- ```python blocks run as written, each in a fresh namespace in a temporary folder that
  stands for the repository root (``configs/``, ``checkpoints/``, ``experiments/`` and
  ``docs/`` linked in; the files the page's ``allfives simulate`` commands write, written with
  2 games). A block whose imports need an extra that is not installed skips, naming it.
- ```bash / ```console / ```sh blocks: every command line is classified (:func:`classify`).
  An ``allfives`` command is parsed by the real argument parser (an unknown flag or a bad
  value fails, fast set); the quick ones of the README run as printed (tests/test_readme.py);
  in the slow set, every ``allfives eval`` and ``allfives simulate`` of the pages runs with
  tiny sizes (``--games 2 --workers 1``, outputs in a temporary folder). ``python -m MOD``
  must name an importable module, ``python FILE``, ``bash FILE`` and ``pytest PATH`` an
  existing file, ``pip install ... ".[EXTRAS]"`` extras of pyproject.toml, ``mkdocs`` the
  site's mkdocs.yml (built strictly in tests/test_docs_site.py). Other programs (Ray's and
  TensorBoard's command lines, git, shell built-ins) are listed in :data:`EXTERNAL` with why
  they are not run; any other line fails the test.
- A block may be skipped only with a reason: ``<!-- no-test: REASON -->`` on the line before
  it. :data:`NO_TEST_BLOCKS` counts them; the test that lists them fails when the count moves.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import re
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: A fenced block, indented or not (in a list item), with the HTML comment on the line before it.
FENCE = re.compile(r"^([ \t]*)(?:<!--\s*([^>]*?)\s*-->\n\1)?```(\w*)\n(.*?)^\1```", re.S | re.M)
SHELLS = ("bash", "console", "sh")

#: How many blocks carry ``<!-- no-test: REASON -->`` (a new skip is a deliberate change here).
NO_TEST_BLOCKS = 5

#: Programs whose command lines the docs show but no test runs, and why.
EXTERNAL = {
    "ray": "Ray's own command line (ray start/stop), for a multi-machine cluster",
    "tensorboard": "TensorBoard's viewer of a run's logs, a server",
    "git": "git, showing an older version of a file from the repository's history",
    "cat": "a shell built-in writing a file for the next line",
    "printf": "a shell built-in writing a file for the next line",
}


@dataclass(frozen=True)
class Block:
    page: str
    index: int
    lang: str
    code: str
    marker: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.index}"

    @property
    def no_test(self) -> str | None:
        """The stated reason when the block is marked ``no-test``."""
        if self.marker.startswith("no-test"):
            return self.marker.partition(":")[2].strip()
        return None


def blocks() -> list[Block]:
    out = []
    for page in PAGES:
        name = page.relative_to(ROOT).as_posix()
        for i, (indent, marker, lang, code) in enumerate(FENCE.findall(page.read_text())):
            code = re.sub(rf"(?m)^{indent}", "", code)
            out.append(Block(name, i, lang, code, marker or ""))
    return out


BLOCKS = blocks()
PYTHON = [b for b in BLOCKS if b.lang == "python" and b.no_test is None]
SHELL = [b for b in BLOCKS if b.lang in SHELLS and b.no_test is None]


def commands(block: Block) -> list[str]:
    """The command lines of a shell block: continuations joined, comments and heredoc bodies
    dropped, ``nice -n N`` and leading ``VAR=value`` assignments stripped; in a loop
    ``for VAR in V1 V2 ...; do CMD; done`` each command with ``$VAR`` as ``V1``."""
    lines, heredoc, loop = [], None, {}
    for line in block.code.replace("\\\n", " ").splitlines():
        if heredoc is not None:
            heredoc = None if line.strip() == heredoc else heredoc
            continue
        if match := re.search(r"<<-?'?(\w+)'?", line):
            heredoc = match.group(1)
        line = line.split("  #")[0].strip()
        if line.startswith("$ "):  # a console prompt
            line = line[2:]
        if not line or line.startswith("#"):
            continue
        if match := re.match(r"for (\w+) in (.*?); do ?(.*)$", line):
            loop = {match.group(1): shlex.split(match.group(2))[0]}
            line = match.group(3)
        if line.endswith("done"):
            line = line[:-len("done")].rstrip("; ")
            closing = True
        else:
            closing = False
        for var, value in loop.items():
            line = re.sub(rf'"?\$(?:{var}|{{{var}}})"?', shlex.quote(value), line)
        loop = {} if closing else loop
        line = re.sub(r"^nice -n \d+ ", "", line)
        line = re.sub(r"^(?:[A-Z_]+=\S+ )+", "", line)
        if line:
            lines.append(line)
    return lines


def _words(command: str) -> list[str]:
    return shlex.split(command.rstrip(";"))


def classify(command: str) -> tuple[str, str]:
    """(how the command is checked, what is checked): ``allfives``, ``module``, ``venv``,
    ``file``, ``pytest``, ``extras``, ``site``, ``external`` or ``unknown``."""
    words = _words(command)
    head = words[0]
    if head == "allfives":
        return "allfives", command
    if head in ("python", "python3") and len(words) > 2 and words[1] == "-m":
        return ("venv" if words[2] == "venv" else "module"), words[2]
    if head in ("python", "python3", "bash") and len(words) > 1:
        return "file", words[1]
    if head == "pytest":
        return "pytest", command
    if head == "pip":
        return "extras", command
    if head == "mkdocs":
        return "site", command
    if head in EXTERNAL:
        return "external", EXTERNAL[head]
    return "unknown", command


SHELL_LINES = [(b, c) for b in SHELL for c in commands(b)]
ALLFIVES = [(b, c) for b, c in SHELL_LINES if classify(c)[0] == "allfives"]


def test_the_pages_have_blocks_of_every_kind() -> None:
    assert len(PYTHON) >= 10 and len(SHELL_LINES) >= 100 and len(ALLFIVES) >= 60


def test_the_skipped_blocks_are_listed_with_their_reasons() -> None:
    skipped = [b for b in BLOCKS if b.no_test is not None]
    listed = [f"{b.id} ({b.lang}): {b.no_test}" for b in skipped]
    print("\n".join(listed))  # shown with pytest -rA / -s
    assert all(len(b.no_test.split()) >= 3 for b in skipped), listed  # a stated reason
    assert len(skipped) == NO_TEST_BLOCKS, listed


def test_every_command_line_is_checked_or_listed_as_external() -> None:
    unknown = [f"{b.id}: {c}" for b, c in SHELL_LINES if classify(c)[0] == "unknown"]
    assert not unknown, f"command lines no test checks (see this module's docstring): {unknown}"


# ------------------------------------------------------------------------ python blocks
def _optional_imports(code: str) -> list[str]:
    """Top-level modules the block imports that are not this project's."""
    mods = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            mods += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            mods.append(node.module.split(".")[0])
    return [m for m in mods if not m.startswith("allfives")]


#: Blocks that compile the batched engine (numba) or start a library that takes long to load.
SLOW_NEEDS = ("make_vec", "BatchedGames", "AllFivesVectorEnv", "ray.", "tianshou", "torchrl")


def _workdir(tmp: Path, page: str) -> None:
    """``tmp`` as the repository root a page's examples assume: its data folders linked in,
    and the files its ``allfives simulate`` commands write (with 2 games each)."""
    from allfives.cli import main

    for folder in ("configs", "checkpoints", "experiments", "docs"):
        (tmp / folder).symlink_to(ROOT / folder)
    for block, command in ALLFIVES:
        argv = _words(command)[1:]
        if block.page == page and argv[0] == "simulate" and "--out" in argv:
            with contextlib.redirect_stdout(io.StringIO()):
                assert main([*argv, "--games", "2"]) == 0, command


@pytest.mark.parametrize("block", [
    pytest.param(b, id=b.id, marks=[pytest.mark.slow] if any(s in b.code for s in SLOW_NEEDS)
                 else []) for b in PYTHON])
def test_python_block_runs(block: Block, tmp_path: Path, monkeypatch) -> None:
    for module in _optional_imports(block.code):
        pytest.importorskip(module, reason=f"{block.id} imports {module}")
    monkeypatch.chdir(tmp_path)
    _workdir(tmp_path, block.page)
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(block.code, block.id, "exec"), {"__name__": "doc"})  # noqa: S102


# ------------------------------------------------------------------------- shell blocks
@pytest.mark.parametrize("command", [c for _, c in ALLFIVES],
                         ids=[f"{b.id}:{i}" for i, (b, _) in enumerate(ALLFIVES)])
def test_allfives_command_parses(command: str) -> None:
    from allfives.cli import build_parser

    argv = _words(command)[1:]
    try:
        build_parser(argv).parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"{command!r}: the parser refused it (exit {exc.code})")


def test_python_modules_files_and_extras_that_the_pages_name_exist() -> None:
    import sys

    optional = (ROOT / "pyproject.toml").read_text().split("[project.optional-dependencies]")[1]
    extras = set(re.findall(r"(?m)^(\w+) = \[", optional.split("\n[")[0]))
    sys.path.insert(0, str(ROOT))  # the lab's modules run from the repository root
    try:
        bad = []
        for block, command in SHELL_LINES:
            kind, what = classify(command)
            if kind == "module" and importlib.util.find_spec(what) is None:
                bad.append(f"{block.id}: no module {what}")
            elif kind == "file" and not what.startswith(("/tmp/", "$")) \
                    and not (ROOT / what).exists():
                bad.append(f"{block.id}: no file {what}")
            elif kind == "pytest":
                paths = [w.split("::")[0] for w in _words(command)[1:] if w.startswith("tests")]
                bad += [f"{block.id}: no {p}" for p in paths if not (ROOT / p).exists()]
            elif kind == "extras":
                named = re.findall(r"\.\[([\w,]+)\]", command)
                bad += [f"{block.id}: no extra {e}" for group in named
                        for e in group.split(",") if e not in extras]
            elif kind == "site" and not (ROOT / "mkdocs.yml").exists():
                bad.append(f"{block.id}: mkdocs without mkdocs.yml")
    finally:
        sys.path.remove(str(ROOT))
    assert not bad, bad


#: Subcommands that the slow test runs with tiny sizes; the others are parsed only (training,
#: servers, interactive play and benchmarks take minutes or wait for a person).
RUN_SMALL = ("eval", "simulate")


#: Agent ids that need an extra: the module it installs.
NEEDS = {"openspiel:": "pyspiel", "rllib:": "ray"}


#: Words that name what an earlier step of a page wrote (a run directory, a file in /tmp).
READS_RUNS = ("runs/", "/tmp", "$", "ckpt:runs/", "rllib:runs/")


def _small(command: str, tmp: Path) -> list[str] | None:
    """``command``'s argv with tiny sizes and its outputs in ``tmp``; None where it reads what
    an earlier step of its page wrote (a run directory, a file in /tmp, a shell variable) or
    where its agents need an extra that is not installed."""
    argv = _words(command)[1:]
    for prefix, module in NEEDS.items():
        if prefix in command and importlib.util.find_spec(module) is None:
            return None  # that extra is not installed here (CI installs every one)
    if argv[0] not in RUN_SMALL or any(w.startswith(READS_RUNS)
                                       or "=runs/" in w for w in argv[1:]
                                       if not w.startswith("-")):
        return None
    out, i = [], 0
    while i < len(argv):
        word = argv[i]
        if word in ("--games", "--workers"):
            out += [word, "2" if word == "--games" else "1"]
            i += 2
            continue
        if word in ("--out", "--json", "--save", "--records-dir", "--csv", "--records"):
            out += [word, str(tmp / f"out{i}{Path(argv[i + 1]).suffix}")]
            i += 2
            continue
        out.append(word)
        i += 1
    if "--games" not in out:
        out += ["--games", "2"]
    if argv[0] == "eval" and "--workers" not in out:
        out += ["--workers", "1"]
    return out


@pytest.mark.slow
def test_every_eval_and_simulate_of_the_pages_runs_with_tiny_sizes(tmp_path: Path, capsys,
                                                                 monkeypatch) -> None:
    """Run from a temporary folder that stands for the repository root, so that whatever a
    command writes (its named outputs, and any other) lands there."""
    from allfives.cli import main
    from allfives_agents.evaluation import evaluate

    monkeypatch.chdir(tmp_path)
    for folder in ("configs", "checkpoints", "experiments", "docs"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    ran, failed = 0, []
    for block, command in ALLFIVES:
        argv = _small(command, tmp_path)
        if argv is None:
            continue
        started = time.perf_counter()
        # Each command of a page is its own process: no agent built for an earlier command is
        # reused.
        evaluate._AGENT_CACHE.clear()
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = exc.code
        capsys.readouterr()
        with capsys.disabled():  # the log of what ran, shown with -s
            print(f"{block.id}: allfives {' '.join(argv)} -> exit {rc}, "
                  f"{time.perf_counter() - started:.1f} s")
        ran += 1
        if rc != 0:
            failed.append(f"{block.id}: {' '.join(argv)} -> exit {rc}")
    assert ran >= 20, ran
    assert not failed, "\n".join(failed)
