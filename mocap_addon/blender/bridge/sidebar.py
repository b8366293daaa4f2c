"""Where the add-on's panels sit: the 3D View's sidebar (N), in a tab of their own."""

from __future__ import annotations

import bpy


class SidebarPanel(bpy.types.Panel):
    """Base of every panel in the sidebar's Mocap tab (File > Import/Export's panel and every tool's);
    never registered itself."""

    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Mocap"
