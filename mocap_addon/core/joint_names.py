"""Moved to :mod:`.naming.names` (what a joint's name says); this name keeps old imports working."""

from .naming.names import FINGERS, NameReading, finger_roles, read_name, words_of

__all__ = ["FINGERS", "NameReading", "finger_roles", "read_name", "words_of"]
