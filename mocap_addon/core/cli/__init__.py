"""The core's command line (``python -m mocap_addon.core``): one module per group of commands."""

from .main import main

__all__ = ["main"]
