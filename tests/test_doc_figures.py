"""Every measured figure of the README and the site names its date and the command that
measures it (issue 64, item 5).

A figure is a measurement as the docs write them: a percentage with a decimal (``63.4%``), a
duration in minutes (``9.93 min``, ``2 min 11 s``) or a rate (``70,224 steps/s``, ``2.04M
decisions per CPU second``); thresholds and limits ("at least 60%", "10 s") are not.

- README: every paragraph with a figure carries a date (``YYYY-MM-DD``) and a command in
  backticks (``allfives ...``, ``pytest ...``, ``python ...``) in itself or in the paragraph
  just before it; the shipped models' table is the registry's (each of its figures is an entry
  of ``checkpoints/models.yaml``, and every entry there has its date and command).
- docs/*.md: every section (heading to heading) with a figure carries a date and a command
  (in backticks, or a shell block). The sections that do not yet are listed in
  :data:`UNDATED`: a new one fails, and one that gets its date and command must leave the list.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
FIGURE = re.compile(r"\b\d+\.\d+ ?%|\b\d+(?:\.\d+)? min\b|\b\d+ min \d+ s\b"
                    r"|\b\d[\d,.]*[kM]? (?:env |learner )?(?:steps|decisions)"
                    r"(?: per (?:CPU )?second|/s)")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
COMMAND = re.compile(r"`(?:allfives|python|pytest|bash|nice|mkdocs|du)\b[^`]*`|^SHELL-BLOCK ",
                     re.M)
FENCE = re.compile(r"^([ \t]*)(?:<!--[^>]*-->\n\1)?```(\w*)\n(.*?)^\1```", re.S | re.M)

#: Sections of docs/ with figures but no date or no command yet: (page, heading).
UNDATED = {
    ("batched.md", "## Speed"),
    ("batched.md", "## Batched bots (`agents/batched/bots.py`)"),
    ("benchmarks.md", "### The batched engine as B grows"),
    ("benchmarks.md", "## Training speed (`python -m allfives_train.bench`)"),
    ("netsearch.md", "## What this says"),
    ("openspiel.md", "## Strength"),
    ("rllib.md", "## The multi-agent table env (`rllib_table.yaml`)"),
    ("strength.md", "# How the shipped models were made"),
    ("training-speed.md", "## Precision by capability (`precision: auto`)"),
    ("training-speed.md", "## A learning demo from scratch"),
    ("training.md", "### How MaskablePPO trains"),
    ("training.md", "#### Rollouts on every core, or on a Ray cluster"),
}


def _flat(text: str) -> str:
    """The page with each shell block as one ``SHELL-BLOCK`` line (a command) and every other
    block dropped (data, code: not prose figures)."""
    def one(match: re.Match[str]) -> str:
        lang, code = match.group(2), match.group(3)
        return "SHELL-BLOCK " + " ; ".join(code.split()) + "\n" if lang in (
            "bash", "console", "sh") else "\n"
    return FENCE.sub(one, text)


def _dated(text: str) -> bool:
    return bool(DATE.search(text) and COMMAND.search(text))


def test_every_readme_paragraph_with_a_figure_names_its_date_and_command() -> None:
    text = _flat((ROOT / "README.md").read_text())
    models = text.split("## The shipped models", 1)[1].split("\n## ", 1)[0]
    text = text.replace(models, "")  # its table: the registry's, checked below
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    bad = [p[:120] for i, p in enumerate(paragraphs) if FIGURE.search(p)
           and not _dated(p) and not (i and _dated(paragraphs[i - 1] + p))]
    assert not bad, f"README figures without a date and a command: {bad}"


def test_the_readme_models_table_is_the_registry_with_dates_and_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## The shipped models", 1)[1].split("\n## ", 1)[0]
    registry = yaml.safe_load((ROOT / "checkpoints" / "models.yaml").read_text())["models"]
    for line in (row for row in section.splitlines() if row.startswith("| `")):
        name = line.split("`")[1]
        entries = registry[name]["strength"]
        assert all(e.get("date") and str(e.get("command", "")).startswith("allfives eval")
                   for e in entries), name
        known = {f"{100 * e['win_rate']:.1f}%" for e in entries}
        figures = set(re.findall(r"\d+\.\d+%", line))
        assert figures and figures <= known, f"{name}: {figures - known} not in models.yaml"
    assert "checkpoints/models.yaml" in section  # where the dates and commands are


def _undated_sections() -> set[tuple[str, str]]:
    found = set()
    for page in sorted((ROOT / "docs").glob("*.md")):
        for section in re.split(r"(?m)^(?=#{1,6} )", _flat(page.read_text())):
            if FIGURE.search(section) and not _dated(section):
                found.add((page.name, section.splitlines()[0].strip()))
    return found


def test_every_docs_section_with_a_figure_names_its_date_and_command() -> None:
    found = _undated_sections()
    new = sorted(found - UNDATED)
    assert not new, f"sections with figures but no date or no command: {new}"
    fixed = sorted(UNDATED - found)
    assert not fixed, f"these sections are dated now: remove them from UNDATED: {fixed}"


def test_the_figure_pattern_tells_measurements_from_limits() -> None:
    assert FIGURE.findall("won 63.4% [60.4, 66.3]; 9.93 min; 2 min 11 s; 70,224 steps/s; "
                          "2.04M decisions per CPU second")
    assert len(FIGURE.findall("won 63.4% in 9.93 min")) == 2
    assert not FIGURE.findall("at least 60%, a 10 s timeout, 3 minutes, 400 games")
