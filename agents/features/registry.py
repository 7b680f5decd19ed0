"""The registry of per-action features: each feature is declared once, as a :class:`Feature`
in one table (``allfives_agents.features.action_features.REGISTRY``), and what the rest of the
project
knows of it is derived from that table by :class:`Registry`:

* its column: its place in the table. The table only grows at its end, so the features a
  checkpoint reads stay a prefix of it, in the same columns;
* the feature sets: set ``v`` is every feature of ``version <= v``, so its count is the
  number of those (:attr:`Registry.counts`);
* the policy kinds that ``policy.npz`` files carry: ``action_features/<v>`` reads set ``v``,
  ``action_features_head/<v>`` the same with a per-move head (:meth:`Registry.kinds`);
* where each feature is computed: the seat counts it applies to (0 elsewhere) and whether
  it is computed for a move that empties the hand (:meth:`Registry.live`);
* the messages that name the counts (:meth:`Registry.count_error`) and the heuristic's
  weights (:meth:`Registry.priors`).

No numpy or numba here: the scalar functions are in the table, the batched twin
(``allfives_agents.batched.features``) writes each feature's column by its name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Generic, TypeVar

SEATS = (2, 3, 4)  # the seat counts a game may have
KIND = "action_features"  # the policy kinds: KIND/<v> and KIND_head/<v>

M = TypeVar("M")


@dataclasses.dataclass(frozen=True)
class Feature(Generic[M]):
    """One per-action feature.

    ``name``: its name (cards list it); ``version``: the feature set that brought it
    (``action_features/<version>``); ``doc``: what it means, with its scale;
    ``scalar``: its value for one move (``allfives_agents.features.action_features.Move``);
    ``seats``: the
    seat counts where it applies (0 with others); ``when_out``: also computed for a move that
    empties the hand (else 0 there); ``prior``: its weight in the heuristic's value, in
    points, from the heuristic's weights (None: 0)."""

    name: str
    version: int
    doc: str
    scalar: Callable[[M], float]
    seats: tuple[int, ...] = SEATS
    when_out: bool = False
    prior: Callable[[Mapping[str, float]], float] | None = None


class Registry(Generic[M]):
    """The features in column order and everything derived from them (see the module)."""

    def __init__(self, features: Sequence[Feature[M]]) -> None:
        check_table(features)
        self.features = tuple(features)
        self.names = tuple(f.name for f in self.features)
        self.column = {f.name: i for i, f in enumerate(self.features)}
        self.latest = self.features[-1].version
        self.counts = tuple(sum(f.version <= v for f in self.features)
                            for v in range(1, self.latest + 1))
        self._live: dict[tuple[int, int, bool], tuple[bool, ...]] = {}
        self._scalars: dict[tuple[int, int, bool], tuple[Callable[[M], float], ...]] = {}

    def __len__(self) -> int:
        return len(self.features)

    def count(self, version: int) -> int:
        """How many features set ``version`` reads."""
        return self.counts[version - 1]

    def kind(self, version: int, head: bool = False) -> str:
        """The policy kind of an actor that reads set ``version`` (``head``: a per-move
        head too)."""
        return f"{KIND}{'_head' if head else ''}/{version}"

    def kinds(self) -> dict[str, int]:
        """Every policy kind and the count of features it reads."""
        return {self.kind(v, head): n for v, n in enumerate(self.counts, 1)
                for head in (False, True)}

    def counts_text(self) -> str:
        """The counts a policy may read, as messages name them: ``9, 10, 12``."""
        return ", ".join(map(str, self.counts))

    def count_error(self, k: object) -> ValueError:
        """The one-line error for a count that is no feature set's."""
        return ValueError(f"action features: {k} asked; a policy reads the first "
                          f"{self.counts_text()} of {', '.join(self.names)}")

    def check_count(self, k: int) -> None:
        """:meth:`count_error` unless ``k`` is a feature set's count."""
        if k not in self.counts:
            raise self.count_error(k)

    def live(self, k: int, players: int, out: bool = False) -> tuple[bool, ...]:
        """For each of the first ``k`` columns: whether it is computed with ``players``
        seats (``out``: for a move that empties the hand), or left at 0."""
        key = (k, players, out)
        if key not in self._live:
            self._live[key] = tuple(players in f.seats and (f.when_out or not out)
                                    for f in self.features[:k])
        return self._live[key]

    def scalars(self, k: int, players: int, out: bool = False
                ) -> tuple[Callable[[M], float], ...]:
        """The scalar functions of the first ``k`` columns, :func:`zero` where a feature is
        not computed (see :meth:`live`)."""
        key = (k, players, out)
        if key not in self._scalars:
            self._scalars[key] = tuple(f.scalar if on else zero for f, on in
                                       zip(self.features, self.live(k, players, out)))
        return self._scalars[key]

    def priors(self, weights: Mapping[str, float]) -> list[float]:
        """Each feature's weight in the heuristic's value, in points."""
        return [0.0 if f.prior is None else f.prior(weights) for f in self.features]

    def describe(self) -> str:
        """The table as text: column, name, set, seats and meaning of each feature."""
        return "\n".join(f"{i:>2} {f.name:<12} /{f.version} seats {','.join(map(str, f.seats))}"
                         f"{' (out too)' if f.when_out else ''}: {f.doc}"
                         for i, f in enumerate(self.features))


def zero(_move: object) -> float:
    """The value of a feature where it is not computed."""
    return 0.0


def check_table(features: Sequence[Feature[M]]) -> None:
    """ValueError unless the names are distinct identifiers, the versions run 1, 2, ... in
    the table's order with none skipped, and every feature names some seat counts of 2-4."""
    if not features:
        raise ValueError("feature registry: no features declared")
    names = [f.name for f in features]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"feature registry: {', '.join(dup)} declared twice")
    last = 0
    for f in features:
        if not f.name.isidentifier():
            raise ValueError(f"feature registry: name {f.name!r} is not an identifier")
        if f.version not in (last, last + 1) or f.version < 1:
            raise ValueError(f"feature registry: {f.name} has version {f.version} after "
                             f"version {last}: the versions run 1, 2, ... in the table's "
                             "order, none skipped")
        if not f.seats or not set(f.seats) <= set(SEATS):
            raise ValueError(f"feature registry: {f.name} seats {f.seats}: some of {SEATS}")
        last = f.version
