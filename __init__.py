"""Extension entry point when the repository root itself is packaged.

Blender imports this file as ``bl_ext.<repo>.mocap_io``; it forwards to the
add-on package.  Outside Blender (tests, tools) importing it does nothing.
"""

if __package__:
    from .mocap_addon import register, unregister  # noqa: F401
