"""algo search_distill's own config section (``search_distill:`` in a config, flags
``--distill-*`` and ``--label-workers``) and its checks."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from allfives_train.algo_checks import a_later_stage, rules_of
from allfives_train.sections import ACTOR, Section, positive_ints, require_number, section_of


@dataclasses.dataclass
class DistillSection:
    """Search distillation: the search that labels positions, and the fit to its values."""

    teacher: str = "search:sims=256,depth=2"
    """The search whose value of every legal move the actor is fitted to: a ``search`` agent
    id (``search:net=<checkpoint>`` puts a network inside the search)."""
    mix: float = 0.5
    """Share of the moves of the labelling games that are the teacher's best; the others are
    the student's (the actor as the run started)."""
    temperature: float = 1.0
    """The fit's targets: softmax(each legal move's value in points / temperature)."""
    epochs: int = 15
    """Passes of the fit over the labelled positions."""
    shard_games: int = 20
    """Games per label shard (written whole: the most a stop can lose; --resume labels only
    the missing shards)."""
    extra_labels: list[str] = dataclasses.field(default_factory=list)
    """Label folders of earlier search_distill runs of the same game (their
    ``run_dir/labels``, e.g. the previous round of expert iteration) whose positions the fit
    uses too, read only; this run labels ``total_steps`` positions of its own."""
    label_workers: int | None = None
    """Label shards worked on at once: local processes, or Ray tasks with ``address``;
    null: one per core of this machine (with ``address``: one per CPU of the cluster). Shard
    ``i`` is seeded by ``(seed, i)`` alone, so the labels are the same for any number."""


SEARCH_DISTILL = Section("search_distill", DistillSection,
                         "the teacher search, its labels and the fit",
                         prefix="distill_", renamed=(("label_workers", "label_workers"),))


def check(cfg: Any, bad: Any) -> None:
    """The search_distill fields (the teacher is built once, to check its id)."""
    own = section_of(cfg, SEARCH_DISTILL)
    if section_of(cfg, ACTOR).policy != "action_features":
        raise bad("policy", "algo search_distill fits the action_features actor: set "
                            "policy: action_features")
    a_later_stage(cfg, bad, "search_distill", "init_from")
    positive_ints(bad, {"distill_epochs": own.epochs, "distill_shard_games": own.shard_games})
    n = own.label_workers
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise bad("label_workers", "must be null (one per core) or an integer >= 1")
    require_number(bad, "distill_mix", own.mix, unit=True)
    require_number(bad, "distill_temperature", own.temperature, unit=False)
    if not isinstance(own.teacher, str):
        raise bad("distill_teacher", "must be a search agent id, e.g. search:sims=256,depth=2")
    from allfives_train.algorithms.search_distill.label import label_engine, make_teacher

    try:
        make_teacher(own.teacher)
    except ValueError as exc:
        raise bad("distill_teacher", str(exc)) from None
    try:
        label_engine(own.teacher, cfg.engine)
    except ValueError as exc:
        raise bad("engine", str(exc)) from None
    _check_extra_labels(cfg, bad, own.extra_labels)


def _check_extra_labels(cfg: Any, bad: Any, folders: Any) -> None:
    """Each ``distill_extra_labels`` folder: readable shards of a run of the same rules."""
    from allfives_train.algorithms.search_distill.label import extra_shards

    if not isinstance(folders, list) or not all(isinstance(f, str) for f in folders):
        raise bad("distill_extra_labels", "must be a list of label folders "
                                          "(a search_distill run's run_dir/labels)")
    for folder in folders:
        run_config = Path(folder).parent / "config.yaml"
        try:
            extra_shards(folder)
            other = rules_of(run_config)
        except (OSError, ValueError) as exc:
            raise bad("distill_extra_labels", f"{folder}: {exc}") from None
        if other != cfg.game().rules:
            raise bad("distill_extra_labels", f"{folder} holds positions of other rules "
                                              f"({run_config}): {other}")
