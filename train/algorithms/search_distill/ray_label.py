"""search_distill's label shards as Ray tasks on a cluster (``address``, ``--address``).

Ray is the scheduler: the run joins the cluster (``ray.init(address=...)``), puts the
student's weights in the object store once and keeps ``label_workers`` tasks (one CPU each;
null: one per CPU of the cluster) on the lowest missing shards; each task returns its shard's
bytes and the id of the node it ran on, and the run writes the shard where a local worker's
would go (:func:`allfives_train.algorithms.search_distill.label.label_all`). The same shard index
gives the same
positions on any node. Ray is imported only here, when ``address`` is set (the ``rllib``
extra). Each node needs this package installed, and a ``search:net=<checkpoint>`` teacher's
checkpoint at the same path.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from allfives_train.algorithms.search_distill.label import ShardTask, label_shard
from allfives_train.shell.checkpoints import write_text_atomic


def import_ray(address: str) -> Any:
    """The ``ray`` module, or a one-line ValueError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ValueError(f"config address={address!r}: labelling on a Ray cluster needs Ray: "
                         "pip install -c constraints.txt -e '.[rllib]' (or set address: "
                         "null for local processes)") from None
    return ray


def check_address(address: str) -> None:
    """Before a run touches its directory: Ray is installed and something answers at
    ``address`` (``auto``: the cluster ``ray start`` began on this machine), else a one-line
    ValueError (``ray.init`` itself would retry a dead address for minutes). A malformed
    address is refused before Ray is looked for."""
    if address != "auto":
        _host_port(address, address)
    import_ray(address)
    where = address
    if address == "auto":
        try:
            from ray._private.services import canonicalize_bootstrap_address_or_die

            where = canonicalize_bootstrap_address_or_die(address)
        except ConnectionError as exc:
            raise ValueError(f"config address='auto': {_first_line(exc)}; start one with "
                             "`ray start --head`, or set address: null for local processes"
                             ) from None
        except (ImportError, AttributeError):  # another Ray: let ray.init find it
            return
    host, port = _host_port(address, where)
    try:
        socket.create_connection((host.strip("[]"), port), timeout=10).close()
    except OSError as exc:
        raise ValueError(f"config address={address!r}: no Ray cluster answers at {where} "
                         f"({_first_line(exc)}); start one with `ray start --head`, or set "
                         "address: null for local processes") from None


def _host_port(address: str, where: str) -> tuple[str, int]:
    """``where`` (``address`` resolved) as host and port, else the one-line ValueError."""
    host, _, port = where.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"config address={address!r}: must be auto or a Ray cluster's "
                         "host:port (e.g. 10.0.0.5:6379)")
    return host, int(port)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def join(ray: Any, address: str) -> bool:
    """Connect to the cluster at ``address`` unless this process already is; True when this
    call connected (so the caller disconnects). One-line ValueError when nothing answers."""
    if ray.is_initialized():
        return False
    try:
        ray.init(address=address, log_to_driver=False)
    except (ConnectionError, ValueError, RuntimeError, TimeoutError) as exc:
        raise ValueError(f"config address={address!r}: no Ray cluster to join there "
                         f"({_first_line(exc)}); start one with `ray start --head`, or "
                         "set address: null for local processes") from None
    return True


def _remote_shard(student: bytes, task: ShardTask) -> tuple[int, int, bytes, str]:
    """One shard on whichever node Ray chose: (index, decisions, bytes, node id)."""
    import ray

    from allfives_agents.evaluation.threads import limit_blas_threads

    limit_blas_threads(1)
    index, decisions, data = label_shard(student, task)
    return index, decisions, data, ray.get_runtime_context().get_node_id()


class RayPool:
    """``workers`` Ray tasks at once on the cluster at ``address``; the node of each finished
    shard is recorded in ``nodes_file`` (a JSON object: shard index -> node id)."""

    def __init__(self, address: str, student: bytes, workers: int | None,
                 nodes_file: Path) -> None:
        self.ray = import_ray(address)
        self.owned = join(self.ray, address)
        self.remote = self.ray.remote(num_cpus=1, max_retries=3)(_remote_shard)
        self.student = self.ray.put(student)
        cpus = int(self.ray.cluster_resources().get("CPU", 0))
        self.workers = workers if workers is not None else max(1, cpus)
        self.nodes_file = nodes_file
        self.nodes: dict[str, str] = (json.loads(nodes_file.read_text())
                                      if nodes_file.is_file() else {})

    def __enter__(self) -> RayPool:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.owned:
            self.ray.shutdown()

    def submit(self, task: ShardTask) -> Any:
        return self.remote.remote(self.student, task)

    def wait(self, running: set[Any]) -> tuple[list[tuple[int, int, bytes]], set[Any]]:
        ready, left = self.ray.wait(list(running), num_returns=1)
        out = []
        for index, decisions, data, node in self.ray.get(ready):
            self.nodes[str(index)] = node
            out.append((index, decisions, data))
        write_text_atomic(self.nodes_file, json.dumps(self.nodes, indent=1, sort_keys=True))
        return out, set(left)

    def cancel(self, running: set[Any]) -> None:
        for ref in running:
            self.ray.cancel(ref)
