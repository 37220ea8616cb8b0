"""The documentation tests import the mkdocs hooks (docs/hooks/) as the site build does."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "hooks"))
