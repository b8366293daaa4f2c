"""``python -m mocap_addon.core``: the command line (:mod:`.cli`)."""

import sys

from .cli import main

sys.exit(main())
