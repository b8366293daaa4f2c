"""Every choice the tools offer, declared once: its ids, labels, descriptions, default and one check.

The core's functions check their keywords with :meth:`Choice.check`; the command line builds its
options from these (:func:`.cli.options.add_choice`) and Blender its enum properties
(``blender.bridge.choices.enum_property``), so a new choice touches this module and one line per
interface.  Ids are lower case here and in the command line; Blender shows them upper case, as its own
enums are (the bridge converts both ways).
"""

from __future__ import annotations

from dataclasses import dataclass

from .units import UNIT_CHOICES, UNITS_IN_METRES


@dataclass(frozen=True)
class Item:
    """One value of a choice: ``id`` as code and the command line spell it, ``label`` and ``description``
    as a user reads them."""

    id: str
    label: str
    description: str


@dataclass(frozen=True)
class Choice:
    """A keyword with a fixed set of values: ``keyword`` names the function argument, the command-line
    option (``--keyword``, ``_`` as ``-``) and the Blender property; ``label`` is Blender's name for it."""

    keyword: str
    label: str
    description: str
    items: tuple[Item, ...]
    default: str

    def __post_init__(self) -> None:
        self.check(self.default)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(item.id for item in self.items)

    def check(self, value: str) -> str:
        """``value`` if it is one of the ids, else ``ValueError`` naming them."""
        if value not in self.ids:
            raise ValueError(f"{self.keyword} must be one of {', '.join(self.ids)}, got {value!r}")
        return value

    def help(self, default: str | None) -> str:
        """Each id with its description, and the default (none: the tool's own)."""
        text = "; ".join(f"{item.id}: {item.description[0].lower()}{item.description[1:]}" for item in self.items)
        return f"{text} (default {default})" if default is not None else text

    def with_default(self, default: str) -> Choice:
        """The same choice with another default (a tool where another value is the natural one)."""
        return Choice(self.keyword, self.label, self.description, self.items, default)


# Retargeting and the canonical conversion (core.retarget) --------------------------------------------------------

PLANTED, FREE = "planted", "free"
FEET = Choice("feet", "Feet", "How the feet meet the floor", (
    Item(PLANTED, "Planted", "Feet on the floor, held where they land while the motion's are planted (leg IK, "
                             "knees bending about their own axes)"),
    Item(FREE, "Free", "Every bone's exact direction, feet where they fall (they may slide and float)")),
    default=PLANTED)
CANONICAL_FEET = FEET.with_default(FREE)  # the canonical conversion keeps exact limb directions unless asked

CANONICAL_METHOD = Choice("method", "Method", "How a motion goes onto the canonical skeleton", (
    Item("rotations", "Rotations", "Canonical T-pose rest; every joint's rotation re-expressed (method 1)"),
    Item("lengths", "Bone Lengths", "The motion's own rest and rotations; canonical bone lengths (method 2)")),
    default="rotations")
BONE_LENGTHS = Choice("lengths", "Lengths", "Whose bone lengths the canonical skeleton takes", (
    Item("reference", "Reference Body", "Bone lengths of the 1.75 m reference body"),
    Item("source", "Source's", "The motion's own bone lengths")), default="reference")
HIPS_TRAVEL = Choice("root", "Root", "How far the hips travel on the target", (
    Item("scale", "Scale by Legs", "Hips travel scaled by the ratio of leg lengths"),
    Item("keep", "Keep", "Hips travel copied as it is"),
    Item("in_place", "In Place", "Hips travel over the ground removed, scaled travel's height kept (game engines "
                                 "move the character themselves)"),
    Item("to_root_bone", "To Root Bone", "Hips travel over the ground carried by the bone above the hips (the "
                                         "rig's root), the hips keeping only what is relative to it")),
    default="scale")
RIG_CONTROLS = Choice("controls", "Controls", "What a retarget keys on a rig animated through controls (Rigify's "
                                            "generated rigs, rigs with a control mapping)", (
    Item("fk", "FK", "The FK controls (Rigify: torso, spine, neck, head, shoulders, limbs), IK/FK switches to FK"),
    Item("ik", "IK", "The FK controls, and the IK controls placed so that IK gives the same limbs (hands, feet, "
                     "toes, poles in the bending planes), limbs switched to IK"),
    Item("bones", "Bones", "The bones themselves, as on any rig (the controls left as they are)")),
    default="fk")

# Blending (core.blend) ---------------------------------------------------------------------------------------------

ALIGNMENT = Choice("align", "Alignment", "Which frame of B pairs with which of A", (
    Item("none", "Frame by Frame", "B's frame f + offset pairs with A's frame f (in time)"),
    Item("scale", "Stretch", "B, from the offset on, stretched over A's length"),
    Item("dtw", "Time Warp", "B warped onto A by dynamic time warping on their poses")), default="none")
ROOT_PATH = Choice("root", "Root", "Where the blend's root goes", (
    Item("blend", "Blend", "The root's path and turn blended like any joint (for clips that share a place and "
                           "heading)"),
    Item("a", "From A", "A's path and heading, the root's tilt blended"),
    Item("b", "From B", "B's path and heading, the root's tilt blended"),
    Item("heading", "Match Heading", "Each path in its own moving heading frame: turning and speed mixed, from "
                                     "A's start (two captures blend whichever way they walk)")), default="heading")

# Reading and writing files (core.formats) --------------------------------------------------------------------------

AUTO_UNIT, FILE_UNIT = "auto", "file"
READ_UNIT = Choice("unit", "Unit", "Length of one file unit", (
    Item(AUTO_UNIT, "Auto", "The file's unit where it states one that gives a plausible person (0.5-3 m), else the "
                            "unit that makes the figure 1.2-2.2 m tall (m, cm, mm, inch or CMU's 1/0.45 inch; none "
                            "fits: scaled to 1.7 m, with a warning); a skeleton without legs: the file's, else metres"),
    Item(FILE_UNIT, "From File", "The file's own unit where it states one, else 1 file unit = 1 metre"),
    *(Item(short, name.title(), f"One file unit is {UNITS_IN_METRES[short]:g} m")
      for short, name in UNIT_CHOICES.items())),
    default=AUTO_UNIT)

BVH_POSITIONS = Choice("position_mode", "Position Channels", "What a BVH joint's position channels mean", (
    Item("replace", "Replace Offset", "Position channels are the joint's local translation "
                                      "(Blender, MotionBuilder, Mixamo)"),
    Item("add", "Add to Offset", "Position channels are added to the joint's OFFSET (older notes)")),
    default="replace")
HTR_ORDER = Choice("order_reading", "Rotation Order", "How an HTR file's EulerRotationOrder is read", (
    Item("listed", "As Listed", "EulerRotationOrder ZYX means Rz·Ry·Rx (what real files show)"),
    Item("reversed", "Reversed", "EulerRotationOrder ZYX means Rx·Ry·Rz")), default="listed")
HTR_TRANSLATION = Choice("translation", "Frame Translation", "How an HTR file's frame translations are read", (
    Item("rotated", "Base-Rotated", "Frame translations are turned by the base rotation (MACFileLib exports)"),
    Item("parent", "Parent Frame", "Frame translations add to the base translation (format notes)")),
    default="parent")
HTR_TRANSLATION_READING = Choice(
    HTR_TRANSLATION.keyword, HTR_TRANSLATION.label, HTR_TRANSLATION.description,
    (Item("evidence", "By Evidence", "Read both ways; keep the reading under which planted feet slide least "
                                     "(the format notes' where they tie)"), *HTR_TRANSLATION.items),
    default="evidence")
ACCLAIM_LENGTHS = Choice("length_reading", "Length Unit", "How an ASF's lengths are read", (
    Item("cmu", "CMU (1/L inch)", "Lengths as written, one unit = 1/L inch for ':units length L' "
                                  "(a CMU skeleton then spans about 1.6 m, toes to head bone)"),
    Item("spec", "Specification", "Lengths multiplied by L on read-in, unit unknown")), default="cmu")
