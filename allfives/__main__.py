"""``python -m allfives``: the ``allfives`` command line (:mod:`allfives.cli`)."""

import sys

from allfives.cli import main

if __name__ == "__main__":
    sys.exit(main())
