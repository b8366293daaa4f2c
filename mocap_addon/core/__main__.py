"""``python -m mocap_addon.core``: the command line (:mod:`.cli`)."""

import os
import sys

from .cli import main

try:
    code = main()
    sys.stdout.flush()
except BrokenPipeError:  # the reader stopped (`... | head`): stop quietly, as other command-line tools do
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
    code = 1
sys.exit(code)
