"""``python -m nlgscore``: the command line, as the ``nlgscore`` script runs it."""

import sys

from nlgscore.cli import main

if __name__ == "__main__":  # importing the module (a docs generator inspecting the package) runs nothing
    sys.exit(main())
