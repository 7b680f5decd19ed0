"""Issue 9 item 18: an installed wheel ships checkpoints/ and configs/ (as the data packages
``allfives_data.checkpoints`` / ``allfives_data.configs``) and the code finds them there; in a
checkout it finds the top-level folders. ``.ci/run`` installs the wheel in a clean venv and
runs ``allfives eval ... ckpt:all_fives_2p``; these are the fast checks."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

from allfives_agents.trained.checkpoint import SHIPPED_DIR
from allfives_env.inputs.shipped import shipped_dir
from allfives_train.config import DEFAULT_CONFIG

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_code_package_is_listed_for_the_wheel() -> None:
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    installed = {"allfives": "allfives", "allfives_env": "allfives_env",
                 "agents": "allfives_agents", "train": "allfives_train"}
    found = {".".join((installed[top], *p.parent.relative_to(ROOT / top).parts))
             for top in installed for p in (ROOT / top).rglob("__init__.py")}
    assert found <= listed, f"add {sorted(found - listed)} to pyproject.toml's packages"
    assert all(name.startswith("allfives") for name in listed)
    mapping = PYPROJECT["tool"]["setuptools"]["package-dir"]
    assert mapping == {"allfives_agents": "agents", "allfives_train": "train",
                       "allfives_data.checkpoints": "checkpoints",
                       "allfives_data.configs": "configs"}


def test_a_checkout_finds_its_own_folders() -> None:
    assert SHIPPED_DIR == ROOT / "checkpoints" == shipped_dir("checkpoints")
    assert DEFAULT_CONFIG == ROOT / "configs" / "train" / "default.yaml"
    assert (SHIPPED_DIR / "all_fives_2p" / "policy.npz").is_file()
    with pytest.raises(ValueError, match="allowed are checkpoints, configs"):
        shipped_dir("results")


def test_an_installed_copy_finds_the_data_packages(tmp_path: Path) -> None:
    """site-packages layout: allfives_env/ beside allfives_data/, no pyproject.toml."""
    site = tmp_path / "site"
    (site / "allfives_env" / "inputs").mkdir(parents=True)
    (site / "allfives_env" / "__init__.py").write_text("")
    (site / "allfives_env" / "inputs" / "__init__.py").write_text("")
    shutil.copy(ROOT / "allfives_env" / "inputs" / "shipped.py", site / "allfives_env" / "inputs")
    for name in ("checkpoints", "configs"):
        (site / "allfives_data" / name / "x").mkdir(parents=True)
    code = ("from allfives_env.inputs.shipped import shipped_dir; "
            "print(shipped_dir('checkpoints')); print(shipped_dir('configs'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
                         timeout=60, check=True).stdout.split()
    assert out == [str(site / "allfives_data" / "checkpoints"),
                   str(site / "allfives_data" / "configs")]


@pytest.mark.slow
def test_the_wheel_holds_the_checkpoints_and_configs(tmp_path: Path) -> None:
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 68:
        pytest.skip("building the wheel offline needs setuptools >= 68 (.ci/run builds it)")
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", "runs", "results", "__pycache__", ".*cache"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(tmp_path / "dist"), str(src)],
                   check=True, timeout=300, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("allfives-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in ROOT.glob("checkpoints/*/*"):
        assert f"allfives_data/{path.relative_to(ROOT).as_posix()}" in names
    for path in ROOT.glob("configs/*/*.yaml"):
        assert f"allfives_data/{path.relative_to(ROOT).as_posix()}" in names
    assert "allfives_env/inputs/shipped.py" in names and "allfives_train/rllib/section.py" in names
