"""``precision: auto`` picks bf16 only where the device computes it natively
(train/algorithms/ppo_batched/precision.py),
with the capability faked for each branch; the run says what it chose; a bad value is one line;
the machine line of the benchmarks (allfives_env/benchmarks/machine.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import allfives_train.algorithms.ppo_batched.precision as precision  # noqa: E402
from allfives.cli import main  # noqa: E402
from allfives_env.benchmarks import machine  # noqa: E402
from allfives_train.algorithms.ppo_batched.net import make_net  # noqa: E402
from allfives_train.algorithms.ppo_batched.precision import choose_precision  # noqa: E402
from allfives_train.config import DEFAULT_CONFIG, load_config  # noqa: E402

CPU = torch.device("cpu")
FAST = DEFAULT_CONFIG.parent / "fast_2p.yaml"


def fake_cpu(monkeypatch: pytest.MonkeyPatch, avx512_bf16: bool, amx: bool,
             onednn_cap: str | None = None) -> None:
    """Make torch's CPU probe report these flags (and oneDNN's ISA cap, if any)."""
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx)
    monkeypatch.delenv("DNNL_MAX_CPU_ISA", raising=False)
    if onednn_cap is None:
        monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    else:
        monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", onednn_cap)


def fake_gpu(monkeypatch: pytest.MonkeyPatch, bf16: bool) -> None:
    """A GPU with native bf16 or one that only emulates it (torch's default answer counts
    emulation as support: the choice must not)."""
    monkeypatch.setattr(torch.cuda, "is_bf16_supported",
                        lambda including_emulation=True: bf16 or including_emulation)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a, **k: "Fake GPU 9000")


# ---------------------------------------------------------------------------- auto
@pytest.mark.parametrize("avx512_bf16, amx, found", [
    (True, False, "AVX512-BF16"), (False, True, "AMX"), (True, True, "AVX512-BF16 and AMX")])
def test_auto_takes_bf16_on_a_cpu_that_has_it(monkeypatch: pytest.MonkeyPatch,
                                              avx512_bf16: bool, amx: bool, found: str) -> None:
    fake_cpu(monkeypatch, avx512_bf16, amx)
    choice = choose_precision("auto", CPU)
    assert choice.precision == "bf16" and choice.warning is None
    assert choice.line() == f"precision: bf16 (auto: this CPU has {found}, native bf16)"


def test_auto_takes_fp32_on_a_cpu_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_cpu(monkeypatch, False, False)
    choice = choose_precision("auto", CPU)
    assert choice.precision == "fp32" and choice.warning is None
    assert choice.line() == ("precision: fp32 (auto: this CPU has no AVX512-BF16 or AMX, so "
                             "bf16 would be emulated)")


@pytest.mark.parametrize("cap, expected", [("AVX2", "fp32"), ("avx512_core", "fp32"),
                                           ("AVX512_CORE_BF16", "bf16"), ("ALL", "bf16"),
                                           ("AVX512_CORE_AMX", "bf16")])
def test_auto_follows_onednn_isa_cap(monkeypatch: pytest.MonkeyPatch, cap: str,
                                     expected: str) -> None:
    """torch's bf16 matmuls run in oneDNN: held below its bf16 kernels, bf16 is emulated."""
    fake_cpu(monkeypatch, True, False, onednn_cap=cap)
    choice = choose_precision("auto", CPU)
    assert choice.precision == expected
    if expected == "fp32":
        assert f"ONEDNN_MAX_CPU_ISA={cap}" in choice.reason


@pytest.mark.parametrize("supported, expected", [(True, "bf16"), (False, "fp32")])
def test_auto_on_a_gpu_asks_cuda(monkeypatch: pytest.MonkeyPatch, supported: bool,
                                 expected: str) -> None:
    fake_gpu(monkeypatch, supported)
    fake_cpu(monkeypatch, not supported, False)  # the CPU's flags play no part
    choice = choose_precision("auto", torch.device("cuda"))
    assert choice.precision == expected and "Fake GPU 9000" in choice.reason


def test_the_residual_actor_is_fp32_whatever_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_cpu(monkeypatch, True, True)
    for asked in ("auto", "bf16"):
        choice = choose_precision(asked, CPU, policy="action_features")
        assert choice.precision == "fp32" and choice.warning is None


# ---------------------------------------------------------------------------- explicit
def test_explicit_fp32_is_kept_where_bf16_is_native(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_cpu(monkeypatch, True, False)
    choice = choose_precision("fp32", CPU)
    assert choice.precision == "fp32" and choice.warning is None


def test_explicit_bf16_is_kept_and_warned_where_it_is_emulated(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake_cpu(monkeypatch, False, False)
    choice = choose_precision("bf16", CPU)
    assert choice.precision == "bf16"
    assert choice.warning is not None and "\n" not in choice.warning
    assert "4.5x" in choice.warning and "set precision: auto or fp32" in choice.warning
    fake_cpu(monkeypatch, True, False)
    assert choose_precision("bf16", CPU).warning is None
    fake_gpu(monkeypatch, False)
    assert choose_precision("bf16", torch.device("cuda")).warning is not None


def test_unknown_precision_is_refused() -> None:
    with pytest.raises(ValueError, match="precision='fp16': must be fp32 or bf16, or auto"):
        choose_precision("fp16", CPU)


def test_the_network_computes_in_what_was_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = load_config(FAST, {"net_arch": [8]})
    assert cfg.precision == "auto"  # the shipped fast config leaves it to the machine
    fake_cpu(monkeypatch, False, False)
    assert make_net(cfg).bf16 is False
    fake_cpu(monkeypatch, True, False)
    assert make_net(cfg).bf16 is True
    assert make_net(cfg, "fp32").bf16 is False


# ---------------------------------------------------------------------------- a run
RUN = ["--config", str(FAST), "--engine", "scalar", "--device", "cpu", "--n-envs", "4",
       "--n-steps", "16", "--batch-size", "32", "--n-epochs", "1", "--net-arch", "8",
       "--eval-games", "2", "--eval-every", "64", "--checkpoint-every", "64",
       "--snapshot-every", "64", "--eval-opponents", "random", "--best-metric", "random",
       "--total-steps", "64", "--no-progress"]


def test_a_run_says_what_it_chose_and_warns_once_for_emulated_bf16(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    fake_cpu(monkeypatch, False, False)
    assert main(["train", *RUN, "--run-dir", str(tmp_path / "auto")]) == 0
    out = capsys.readouterr()
    chosen = [line for line in out.out.splitlines() if line.startswith("precision:")]
    assert chosen == ["precision: fp32 (auto: this CPU has no AVX512-BF16 or AMX, so bf16 "
                      "would be emulated)"]
    assert "warning" not in out.err
    assert main(["train", *RUN, "--precision", "bf16", "--quiet",
                 "--run-dir", str(tmp_path / "bf16")]) == 0
    out = capsys.readouterr()
    warnings = [line for line in out.err.splitlines() if "precision bf16" in line]
    assert len(warnings) == 1 and "4.5x" in warnings[0]
    assert "precision:" not in out.out  # --quiet: the warning only


def test_a_bad_precision_in_a_config_is_one_line_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text(FAST.read_text().replace("precision: auto", "precision: half"))
    run_dir = tmp_path / "never"
    assert main(["train", "--config", str(config), "--run-dir", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("allfives train: error: config precision='half': must be fp32 or bf16, or "
                   "auto (bf16 only where the device computes it natively)")
    assert not run_dir.exists()


# ---------------------------------------------------------------------------- the machine
def test_machine_reads_cpuinfo(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n"
                    "model\t\t: 17\nmodel name\t: AMD EPYC\nflags\t\t: fpu avx2 avx512_bf16\n")
    assert machine._cpuinfo_field(("model name",), str(info)) == "AMD EPYC"
    assert machine._cpuinfo_field(("cpu family",), str(info)) == "25"
    assert machine._cpuinfo_field(("nothing",), str(info)) is None
    assert machine._cpuinfo_field(("flags",), str(tmp_path / "missing")) is None
    assert machine.bf16_flags(frozenset({"fpu", "avx2"})) == []
    assert machine.bf16_flags(frozenset({"avx2", "avx512_bf16", "amx_bf16"})) == [
        "avx512_bf16", "amx_bf16"]


def test_machine_line_names_cpu_torch_and_numba() -> None:
    info = machine.describe()
    assert set(info) >= {"cpu", "cpus", "cpu_bf16", "torch_cpu_capability", "numba_target"}
    assert info["torch_cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    line = machine.format_machine(info)
    assert line.startswith(f"machine: {info['cpu']}, {info['cpus']} CPUs, native bf16: ")
    assert f"torch CPU capability {info['torch_cpu_capability']}" in line
    assert "numba target" in line and "\n" not in line
    fake = {**info, "cpu_bf16": None, "torch_cpu_capability": None, "numba_target": None}
    assert machine.format_machine(fake) == (f"machine: {info['cpu']}, {info['cpus']} CPUs, "
                                            "native bf16: none; numba target none (numba not "
                                            "installed)")


def test_machine_line_names_isa_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    """A figure measured with a library held below the CPU says so."""
    for name in machine.ISA_CAPS:
        monkeypatch.delenv(name, raising=False)
    assert machine.describe(with_torch=False)["isa_caps"] is None
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    info = machine.describe(with_torch=False)
    assert info["isa_caps"] == {"ONEDNN_MAX_CPU_ISA": "AVX2"}
    assert machine.format_machine(info).endswith("; held below the CPU by ONEDNN_MAX_CPU_ISA=AVX2")


def test_precision_falls_back_to_cpuinfo_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without torch's private probes the CPU's own flags decide."""
    monkeypatch.delattr(torch.cpu, "_is_avx512_bf16_supported")
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    monkeypatch.delenv("DNNL_MAX_CPU_ISA", raising=False)
    monkeypatch.setattr(precision, "bf16_flags", lambda: ["amx_bf16"])
    assert choose_precision("auto", CPU).line() == "precision: bf16 (auto: this CPU has AMX, " \
                                                   "native bf16)"
    monkeypatch.setattr(precision, "bf16_flags", lambda: [])
    assert choose_precision("auto", CPU).precision == "fp32"


def test_allfives_bench_prints_and_writes_the_machine(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench.json"
    assert main(["bench", "--seconds", "0.2", "--rounds", "1", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["machine"]["cpu"] == machine.cpu_model()
    assert result["machine"]["torch_cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert result["machine"]["numba_target"] == machine.numba_target()
    lines = capsys.readouterr().out.splitlines()
    assert machine.format_machine(result["machine"]) in lines[:3]  # beside the figures' header


# ----------------------------------------------------------------------------
# allfives_train.benchmarks.bench
def _tiny(path: Path, source: Path, **fields: int) -> Path:
    text = source.read_text()
    for name, value in fields.items():
        lines = [f"{name}: {value}" if line.startswith(f"{name}:") else line
                 for line in text.splitlines()]
        text = "\n".join(lines) + "\n"
    path.write_text(text)
    return path


def test_train_bench_prints_the_machine_and_the_precision(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from allfives_train.benchmarks.bench import main as bench
    from allfives_train.config import MASKABLE_CONFIG

    fast = _tiny(tmp_path / "fast.yaml", FAST, n_envs=8, n_steps=8, batch_size=32)
    mask = _tiny(tmp_path / "mask.yaml", MASKABLE_CONFIG, n_envs=4, n_steps=16, batch_size=32)
    out = tmp_path / "bench.json"
    assert bench(["--config", str(mask), "--fast-config", str(fast), "--opponents", "greedy",
                  "--steps", "64", "--env-steps", "20", "--fast-steps", "64",
                  "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    from allfives_train.algorithms.ppo_batched.net import resolve_device

    # the fast config's device (auto: a GPU where one exists), not the CPU's flags alone
    chosen = choose_precision("auto", resolve_device("auto"), load_config(FAST).value("policy"))
    assert result["fast"]["precision"] == chosen.precision
    assert result["machine"]["cpu"] == machine.cpu_model()
    assert result["load_average_1min"] is not None and "greedy" in result["opponents"]
    printed = capsys.readouterr().out
    assert machine.format_machine(result["machine"]) in printed.splitlines()
    assert chosen.line() in printed


def test_train_bench_refuses_an_unknown_network_in_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    from allfives_train.benchmarks.bench import main as bench

    assert bench(["--ckpt", "no_such_model", "--opponents", "selfplay"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("python -m allfives_train.benchmarks.bench: error: --ckpt: checkpoint "
                          "'no_such_model' not found") and "\n" not in err
