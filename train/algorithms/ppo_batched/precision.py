"""The fast path's arithmetic by capability: ``precision: auto`` takes bfloat16 only where the
device computes it natively.

bfloat16 autocast halves the learner's matmul time on a CPU with AVX512-BF16 or AMX and on a
GPU that supports it; elsewhere torch emulates it and the learner gets several times slower
(PyTorch's own guidance: bf16 autocast on CPU pays only with AVX512-BF16 or AMX). So:

* ``auto`` (the default): ``bf16`` on a CPU whose flags have ``avx512_bf16`` or ``amx_bf16``
  (as torch reads them) unless oneDNN, which runs torch's bfloat16 matmuls, is held below
  its bfloat16 kernels by ``ONEDNN_MAX_CPU_ISA``; ``bf16`` on a CUDA GPU where
  ``torch.cuda.is_bf16_supported(including_emulation=False)``; ``fp32`` everywhere else;
* ``fp32`` / ``bf16``: taken as given; an explicit ``bf16`` where it is not native prints
  :data:`EMULATED_COST` as a one-line warning.

``torch.backends.cpu.get_cpu_capability()`` cannot tell: in torch 2.13 it names only the
vector ISA torch dispatches to (``DEFAULT``, ``VSX``, ``Z VECTOR``, ``NO AVX``, ``AVX2``,
``AVX512``, ``SVE256``), never bfloat16 or AMX; the flags come from ``torch.cpu``'s probes.

:func:`choose_precision` decides and says why in one line (``allfives train`` prints it).
The heuristic-residual actor (``policy: action_features``) computes in fp32 whatever
``precision`` says.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch

from allfives_env.benchmarks.machine import bf16_flags

PRECISIONS = ("auto", "fp32", "bf16")
# what emulated bf16 costs the fast path, measured with python -m allfives_train.benchmarks.bench
# --opponents
# selfplay (fast_2p.yaml; the figures and machines in docs/training-speed.md)
EMULATED_COST = ("about 4.5x fewer learner steps/s than fp32 (4.5x-4.7x in python -m "
                 "allfives_train.benchmarks.bench --opponents selfplay, docs/training-speed.md)")
# oneDNN's ISA caps (ONEDNN_MAX_CPU_ISA) that still include its bfloat16 kernels
_ONEDNN_BF16 = ("ALL", "AVX512_CORE_BF16", "AVX512_CORE_FP16", "AVX512_CORE_AMX",
                "AVX512_CORE_AMX_FP16", "AVX10_")


@dataclass(frozen=True)
class Choice:
    """What the network computes in (``fp32`` or ``bf16``), why, and a warning (or None)."""

    precision: str
    reason: str
    warning: str | None = None

    def line(self) -> str:
        return f"precision: {self.precision} ({self.reason})"


def cpu_bf16() -> tuple[bool, str]:
    """(native bfloat16 on this CPU for torch, what was found) — the CPU's flags as torch
    reads them (``torch.cpu._is_avx512_bf16_supported``/``_is_amx_tile_supported``, else
    ``/proc/cpuinfo``), and oneDNN's ISA cap."""
    found = _torch_cpu_flags()
    if not found:
        return False, "this CPU has no AVX512-BF16 or AMX"
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA") or os.environ.get("DNNL_MAX_CPU_ISA")
    if cap and not cap.strip().upper().startswith(_ONEDNN_BF16):
        return False, (f"this CPU has {' and '.join(found)}, but ONEDNN_MAX_CPU_ISA={cap} holds "
                       "torch's bf16 matmuls below them")
    return True, f"this CPU has {' and '.join(found)}"


def _torch_cpu_flags() -> list[str]:
    """``AVX512-BF16`` / ``AMX`` as torch's CPU probe sees them (the flags when it has none)."""
    probes = (("AVX512-BF16", "_is_avx512_bf16_supported"), ("AMX", "_is_amx_tile_supported"))
    cpu: Any = getattr(torch, "cpu", None)
    if cpu is not None and all(hasattr(cpu, fn) for _, fn in probes):
        return [name for name, fn in probes if getattr(cpu, fn)()]
    names = {"avx512_bf16": "AVX512-BF16", "amx_bf16": "AMX", "bf16": "BF16"}
    return [names[f] for f in bf16_flags()]


def gpu_bf16(device: torch.device) -> tuple[bool, str]:
    """(native bfloat16 on this CUDA device, its name): compute capability 8.0 or more, or
    ROCm (``torch.cuda.is_bf16_supported`` without counting emulation)."""
    name = torch.cuda.get_device_name(device)
    try:
        native = torch.cuda.is_bf16_supported(including_emulation=False)
    except TypeError:  # a torch without the argument
        native = torch.cuda.is_bf16_supported()
    if native:
        return True, f"GPU {name} supports bf16"
    return False, f"GPU {name} has no native bf16"


def choose_precision(requested: str, device: torch.device, policy: str = "mlp") -> Choice:
    """``fp32`` or ``bf16`` for ``requested`` (``auto``, ``fp32``, ``bf16``) on ``device``."""
    if requested not in PRECISIONS:
        raise ValueError(f"precision={requested!r}: must be fp32 or bf16, or auto (bf16 only "
                         "where the device computes it natively)")
    if policy != "mlp":
        return Choice("fp32", f"policy {policy} computes in fp32 whatever precision says")
    native, why = gpu_bf16(device) if device.type == "cuda" else \
        cpu_bf16() if device.type == "cpu" else (False, f"device {device.type}")
    if requested == "fp32":
        return Choice("fp32", "as configured")
    if requested == "bf16":
        if native:
            return Choice("bf16", f"as configured; {why}")
        return Choice("bf16", f"as configured; {why}", warning=(
            f"warning: precision bf16 where it is not native ({why}): torch emulates it, "
            f"{EMULATED_COST}; set precision: auto or fp32"))
    if native:
        return Choice("bf16", f"auto: {why}, native bf16")
    return Choice("fp32", f"auto: {why}, so bf16 would be emulated")


def announce(choice: Choice, quiet: bool = False) -> None:
    """Print the choice's line (not when ``quiet``) and its warning (always, on stderr)."""
    import sys

    if not quiet:
        print(choice.line(), flush=True)
    if choice.warning:
        print(choice.warning, file=sys.stderr, flush=True)
