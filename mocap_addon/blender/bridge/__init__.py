"""What the File-menu operators (``files/``) and the sidebar tools (``tools/``) both stand on: reading and writing
rigs and actions, units and axes, the bone mapping, progress, rollback and the sidebar's place."""
