"""Acclaim ASF (skeleton) and AMC (motion), per the Acclaim specification v1.10.

Each bone becomes a joint at the bone's start whose frame is the bone's axis
frame ``C``.  With motion rotation ``M`` from the dof values, the spec's
``W_b = W_p C_b M_b C_b^-1`` gives a local rotation ``(C_p^-1 C_b) M_b``, so
``C_p^-1 C_b`` is the joint's rest rotation and ``M_b`` its frame rotation; the
joint sits at its parent bone's end, ``C_p^-1 (length_p direction_p)`` in the
parent's frame; a leaf's end is an End Site.  Order tokens list rotations in the
order they are applied: ``dof rx ry rz`` and ``axis XYZ`` both mean
``Rz @ Ry @ Rx`` (CMU's BVH conversion writes ``dof rx ry rz`` as channels
``Zrotation Yrotation Xrotation``).

Units: ``:units length L`` scales lengths.  CMU files say ``length 0.45`` and
in practice their lengths are in units of 1/0.45 inch, so by default lengths
are kept as written and ``unit_in_metres = 0.0254 / L``
(``length_reading="cmu"``); ``length_reading="spec"`` multiplies them by ``L``
on read-in, as the specification's text says, and leaves the unit unknown.
Written files state the clip's unit the same way, ``L = 0.0254 / unit`` (a
metre where the clip states none), with lengths as they are.

Reading: :mod:`.asf` and :mod:`.amc` parse the two files' text, :mod:`.read`
makes the clip.  Writing: :mod:`.write` plans the bones and writes both files.
"""

from ..fileformat import FileFormat
from .amc import parse_amc
from .asf import DOF_TOKENS, AsfSkeleton, Bone, applied_order, file_layout, parse_asf
from .read import find_skeleton, read_amc, read_asf
from .write import acclaim_form, format_amc, format_asf, length_unit, unit_note, write_amc

__all__ = ["DOF_TOKENS", "FORMAT", "AsfSkeleton", "Bone", "acclaim_form", "applied_order",
           "file_layout", "find_skeleton", "format_amc", "format_asf", "length_unit", "parse_amc", "parse_asf",
           "read_amc", "read_asf", "unit_note", "write_amc"]

# The .amc files are the takes; each reads with its .asf, found beside it unless given as ``skeleton``.
FORMAT = FileFormat("amc", "ASF/AMC", __name__, readers={".amc": "read_amc", ".asf": "read_asf"}, writer="write_amc",
                    signatures={".asf": (":VERSION", ":NAME"), ".amc": (":FULLY-SPECIFIED", ":DEGREES", ":RADIANS")},
                    unit_note="unit_note", up_axis_known=True, skeleton_extension=".asf",
                    find_skeleton="find_skeleton")
