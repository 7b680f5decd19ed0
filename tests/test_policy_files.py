"""Issue 9 item 10: a truncated or corrupt ``policy.npz`` and a policy with NaN or infinite
weights are refused with one line (NumpyPolicy.load / from_arrays), in the library and in
``allfives eval`` / ``allfives simulate`` (exit 2, no traceback)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from allfives.cli import main
from allfives_agents.base import make_agent
from allfives_agents.trained.policy_numpy import NumpyPolicy

SHIPPED = Path(__file__).resolve().parent / "fixtures" / "checkpoints" / "ppo_all_fives_2p"


@pytest.fixture
def ckpt(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SHIPPED, tmp_path / "ckpt"))


@pytest.mark.parametrize("keep", [0, 4, 30, 100, 1000, 0.5, 0.99])
def test_truncated_policy_files_are_refused_with_one_line(ckpt: Path, keep: float) -> None:
    policy = ckpt / "policy.npz"
    data = policy.read_bytes()
    policy.write_bytes(data[:int(keep * len(data)) if isinstance(keep, float) else keep])
    with pytest.raises(ValueError, match="policy.npz: not a readable policy file") as err:
        NumpyPolicy.load(policy)
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="not a readable policy file"):
        make_agent(f"ckpt:{ckpt}")


def _arrays(ckpt: Path) -> dict[str, np.ndarray]:
    with np.load(ckpt / "policy.npz") as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("key", ["w0", "bout"])
def test_non_finite_weights_are_refused(ckpt: Path, bad: float, key: str) -> None:
    arrays = _arrays(ckpt)
    arrays[key] = arrays[key].copy()
    arrays[key].flat[3] = bad
    with pytest.raises(ValueError, match="NaN or infinite weights"):
        NumpyPolicy.from_arrays(arrays)
    np.savez(ckpt / "policy.npz", **arrays)
    with pytest.raises(ValueError, match="policy.npz: policy layer .* NaN or infinite"):
        NumpyPolicy.load(ckpt / "policy.npz")


def test_non_numeric_and_wrongly_shaped_weights_are_refused(ckpt: Path) -> None:
    arrays = _arrays(ckpt)
    with pytest.raises(ValueError, match="not numbers"):
        NumpyPolicy.from_arrays({**arrays, "w0": np.array(["a", "b"])})
    with pytest.raises(ValueError, match="2-d weights"):
        NumpyPolicy.from_arrays({**arrays, "w0": np.zeros(3, np.float32)})


@pytest.mark.parametrize("damage", ["truncate", "nan"])
@pytest.mark.parametrize("command", [
    ["eval", "--agents", "greedy", "CKPT", "--games", "2", "--no-progress"],
    ["simulate", "--agents", "CKPT", "greedy", "--games", "1", "--no-progress"],
])
def test_cli_refuses_a_damaged_checkpoint_in_one_line(ckpt: Path, damage: str,
                                                      command: list[str],
                                                      capsys: pytest.CaptureFixture) -> None:
    if damage == "truncate":
        data = (ckpt / "policy.npz").read_bytes()
        (ckpt / "policy.npz").write_bytes(data[:len(data) // 2])
    else:
        arrays = _arrays(ckpt)
        arrays["w1"] = arrays["w1"] * np.nan
        np.savez(ckpt / "policy.npz", **arrays)
    argv = [f"ckpt:{ckpt}" if a == "CKPT" else a for a in command]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "policy.npz" in err, err
