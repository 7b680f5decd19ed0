"""The Gymnasium ids, registered by ``import allfives_env``:

``allfives/AllFives-v0``
    the single-agent env (the learner's seat against opponents played inside ``step``;
    :class:`allfives_train.games.single_agent.AllFivesSingleAgentEnv`), built by
    ``gymnasium.make("allfives/AllFives-v0", opponents=["heuristic"], players=2)``; and, with
    ``gymnasium.make_vec(..., num_envs=N)``, its batched vector version
    (:class:`allfives_train.games.vector_env.AllFivesVectorEnv`, needs numba: ``.[fast]``).

``gymnasium.make("allfives_env:allfives/AllFives-v0")`` imports this package first, so it works
without an ``import allfives_env`` (Gymnasium 1.x loads no plugin entry points). The entry
points are strings, imported by Gymnasium only when an env is made.
"""

from __future__ import annotations

SINGLE_AGENT_ID = "allfives/AllFives-v0"
ENTRY_POINT = "allfives_train.games.registered:single_agent_env"
VECTOR_ENTRY_POINT = "allfives_train.games.registered:vector_env"


def register() -> None:
    """Register the ids with Gymnasium (a no-op when already registered)."""
    import gymnasium

    if SINGLE_AGENT_ID not in gymnasium.registry:
        gymnasium.register(SINGLE_AGENT_ID, entry_point=ENTRY_POINT,
                           vector_entry_point=VECTOR_ENTRY_POINT)
