"""Removed options (``oracle_critic``, ``belief_aux``: tried, no better, docs/strength.md):
a saved config that holds them turned off still loads; turned on, one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from allfives.cli import main
from allfives_train.config import RETIRED, flat_fields, flatten, load_config, retire

ROOT = Path(__file__).resolve().parent.parent
CARDS = sorted(ROOT.glob("checkpoints/*/card.json"))


@pytest.mark.parametrize("card", CARDS, ids=lambda p: p.parent.name)
def test_every_shipped_card_and_run_config_holds_only_fields_or_retired_ones(card: Path) -> None:
    for config in (json.loads(card.read_text())["config"],
                   yaml.safe_load((card.parent / "config.yaml").read_text())):
        assert set(retire(flatten(config))) <= set(flat_fields())  # flat, as written then


def test_an_old_run_config_with_them_off_loads(tmp_path: Path) -> None:
    old = {"algo": "ppo_batched", "total_steps": 1000, "oracle_critic": False,
           "belief_aux": 0.0}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(old))
    cfg = load_config(tmp_path / "config.yaml")
    assert cfg.total_steps == 1000 and not any(hasattr(cfg, name) for name in RETIRED)


@pytest.mark.parametrize("line", ["oracle_critic: true", "belief_aux: 0.5"])
def test_one_turned_on_is_refused_in_one_line(tmp_path: Path, line: str, capsys) -> None:
    (tmp_path / "c.yaml").write_text(f"algo: ppo_batched\n{line}\n")
    assert main(["train", "--config", str(tmp_path / "c.yaml"),
                 "--run-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "was removed" in err and "2f888d7" in err
    assert "Traceback" not in err and not (tmp_path / "run").exists()
