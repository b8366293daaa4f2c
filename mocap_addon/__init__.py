"""Motion capture import/export for Blender: BVH, Motion Analysis HTR and Acclaim ASF/AMC.

``mocap_addon.core`` is plain Python and numpy; ``mocap_addon.blender`` holds the
operators and panels and is only imported when Blender registers the add-on.
"""


def register() -> None:
    """Register the Blender classes (safe to call twice)."""
    from .blender import register as register_blender

    register_blender()


def unregister() -> None:
    """Unregister the Blender classes (safe to call twice)."""
    from .blender import unregister as unregister_blender

    unregister_blender()
