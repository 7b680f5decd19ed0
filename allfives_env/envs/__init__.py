"""What the environments share beside the PettingZoo env itself (``allfives_env.env``,
``allfives_v0``, ``allfives_v1`` at the package's top): the action views, the adapters to other
multi-agent libraries, and the Gymnasium ids.
"""
