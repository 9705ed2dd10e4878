"""``python -m pytest_pibench ...`` is the ``pi`` command."""

import sys

from pytest_pibench.cli import main

if __name__ == "__main__":
    sys.exit(main())
