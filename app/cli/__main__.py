"""``python -m microrelease.app.cli``: the console script ``microrelease``."""

import sys

from microrelease.app.cli.run import entry

sys.exit(entry())
