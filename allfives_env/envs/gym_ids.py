"""The Gymnasium ids, registered by ``import allfives_env``.

This floor declares the extension point; the packages above it fill it. An installed package
declares an id in pyproject.toml's entry-point group ``allfives.gym_ids`` (name: the id without
its ``allfives/`` namespace; value: the ``module:callable`` that builds the env) and, where
it has a batched vector version, the same name in ``allfives.gym_vector_ids``. This project's
pyproject.toml declares ``allfives/AllFives-v0``, the single-agent env (the learner's seat
against opponents played inside ``step``), built by
``gymnasium.make("allfives/AllFives-v0", opponents=["heuristic"], players=2)``, and with
``gymnasium.make_vec(..., num_envs=N)`` its batched vector version (needs numba: ``.[fast]``);
docs/environment.md.

``gymnasium.make("allfives_env:allfives/AllFives-v0")`` imports this package first, so it works
without an ``import allfives_env`` (Gymnasium 1.x loads no plugin entry points). The entry
points are strings, handed to Gymnasium as they are: it imports one only when an env is made.
"""

from __future__ import annotations

from importlib.metadata import entry_points

NAMESPACE = "allfives"
#: The entry-point groups: the ids' builders, and their vector versions.
GROUP, VECTOR_GROUP = "allfives.gym_ids", "allfives.gym_vector_ids"
SINGLE_AGENT_ID = f"{NAMESPACE}/AllFives-v0"


def declared() -> dict[str, tuple[str, str | None]]:
    """The declared ids: id -> (entry point, vector entry point or None)."""
    found = entry_points()  # one scan of the installed metadata (about 15 ms)
    vectors = {ep.name: ep.value for ep in found.select(group=VECTOR_GROUP)}
    return {f"{NAMESPACE}/{ep.name}": (ep.value, vectors.get(ep.name))
            for ep in found.select(group=GROUP)}


def register() -> None:
    """Register the declared ids with Gymnasium (a no-op for one already registered)."""
    import gymnasium

    for env_id, (entry_point, vector_entry_point) in declared().items():
        if env_id not in gymnasium.registry:
            gymnasium.register(env_id, entry_point=entry_point,
                               vector_entry_point=vector_entry_point)
