"""``python -m allfives_train.baselines``."""

from allfives_train.baselines.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
