"""The machine a speed figure came from: CPU model, bfloat16 support, torch and numba targets.

``allfives bench`` and the trainers' benchmark (train/benchmarks/bench.py) print :func:`describe`'s
line
beside their figures and put its fields in ``--json``, so a figure always names the machine it
was measured on (as EnvPool's throughput tables name the CPU of every row).

* ``cpu``: the CPU model (``/proc/cpuinfo``'s ``model name``, else ``platform.processor()``);
* ``cpus``: logical CPUs this process sees;
* ``cpu_bf16``: native bfloat16 arithmetic on the CPU (AVX512-BF16 or AMX on x86, the ``bf16``
  feature on Arm), from the CPU's flags;
* ``torch_cpu_capability``: the vector ISA torch dispatches its CPU kernels to
  (``torch.backends.cpu.get_cpu_capability()``: ``DEFAULT``, ``AVX2``, ``AVX512``, ``SVE256``,
  ...), or None without torch. The core imports without torch: torch is imported here only
  when it is installed, and only when asked;
* ``numba_target``: the CPU numba compiles the batched engine for (``NUMBA_CPU_NAME`` when set,
  else LLVM's host CPU name, e.g. ``znver4``, ``skylake-avx512``), or None without numba;
* ``isa_caps``: the environment variables set that hold a library below the CPU
  (``ONEDNN_MAX_CPU_ISA``, ``ATEN_CPU_CAPABILITY``, ``MKL_ENABLE_INSTRUCTIONS``, ...), or None.
"""

from __future__ import annotations

import os
import platform
from functools import cache
from typing import Any

CPUINFO = "/proc/cpuinfo"
# environment variables that hold a library below the CPU's own instruction set
ISA_CAPS = ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY",
            "MKL_ENABLE_INSTRUCTIONS", "NUMBA_CPU_NAME")
BF16_FLAGS = ("avx512_bf16", "amx_bf16")  # x86 flags of native bfloat16 arithmetic
ARM_BF16_FLAG = "bf16"


def _cpuinfo_field(names: tuple[str, ...], path: str = CPUINFO) -> str | None:
    """The first value of one of ``names`` in ``/proc/cpuinfo`` (None where there is none)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                key, sep, value = line.partition(":")
                if sep and key.strip() in names:
                    return value.strip()
    except OSError:
        return None
    return None


@cache
def cpu_model() -> str:
    """The CPU model, e.g. ``AMD EPYC 7B13 (family 25, model 1)``: the name, and on x86 the
    family and model numbers (a virtual machine's name often stops at ``AMD EPYC``)."""
    name = _cpuinfo_field(("model name", "Model", "cpu model", "Hardware"))
    name = name or platform.processor() or platform.machine() or "unknown CPU"
    family, model = _cpuinfo_field(("cpu family",)), _cpuinfo_field(("model",))
    return f"{name} (family {family}, model {model})" if family and model else name


@cache
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (``flags`` on x86, ``Features`` on Arm); empty where unknown."""
    flags = _cpuinfo_field(("flags", "Features"))
    return frozenset(flags.split()) if flags else frozenset()


def bf16_flags(flags: frozenset[str] | None = None) -> list[str]:
    """The CPU flags that mean native bfloat16 arithmetic (empty: none)."""
    flags = cpu_flags() if flags is None else flags
    found = [f for f in BF16_FLAGS if f in flags]
    if not found and platform.machine().lower() in ("aarch64", "arm64") \
            and ARM_BF16_FLAG in flags:
        found.append(ARM_BF16_FLAG)
    return found


def torch_cpu_capability() -> str | None:
    """``torch.backends.cpu.get_cpu_capability()`` where torch is installed, else None."""
    try:
        import torch
    except ImportError:
        return None
    try:
        return str(torch.backends.cpu.get_cpu_capability())
    except (AttributeError, RuntimeError):
        return None


def numba_target() -> str | None:
    """The CPU numba compiles for: ``NUMBA_CPU_NAME`` when set, else LLVM's host CPU."""
    try:
        import llvmlite.binding as llvm
        import numba
    except ImportError:
        return None
    name = getattr(numba.config, "CPU_NAME", None)
    return str(name) if name else str(llvm.get_host_cpu_name())


def describe(with_torch: bool = True) -> dict[str, Any]:
    """The machine's fields (the module docstring); ``with_torch=False`` leaves torch out."""
    return {"cpu": cpu_model(), "cpus": os.cpu_count(), "cpu_bf16": bf16_flags() or None,
            "torch_cpu_capability": torch_cpu_capability() if with_torch else None,
            "numba_target": numba_target(), "platform": platform.platform(),
            "isa_caps": {k: os.environ[k] for k in ISA_CAPS if os.environ.get(k)} or None}


def format_machine(info: dict[str, Any]) -> str:
    """One line: ``machine: AMD EPYC 9B14, 2 CPUs, bf16: avx512_bf16; torch CPU capability
    AVX512; numba target znver4``."""
    bf16 = ", ".join(info["cpu_bf16"]) if info.get("cpu_bf16") else "none"
    parts = [f"machine: {info['cpu']}, {info['cpus']} CPUs, native bf16: {bf16}"]
    if info.get("torch_cpu_capability"):
        parts.append(f"torch CPU capability {info['torch_cpu_capability']}")
    parts.append(f"numba target {info.get('numba_target') or 'none (numba not installed)'}")
    if info.get("isa_caps"):
        caps = " ".join(f"{k}={v}" for k, v in info["isa_caps"].items())
        parts.append(f"held below the CPU by {caps}")
    return "; ".join(parts)
