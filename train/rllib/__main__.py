"""``python -m train.rllib``: the RLlib trainer without the ``allfives`` console script."""

import sys

from train.rllib.cli import main

sys.exit(main())
