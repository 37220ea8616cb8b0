import sys

from nlgscore.cli import main

sys.exit(main())
