"""``python -m allfives_train.rllib``: the RLlib trainer without the ``allfives`` console script."""

import sys

from allfives_train.rllib.cli import main

sys.exit(main())
