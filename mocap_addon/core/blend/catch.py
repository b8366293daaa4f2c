"""The catch game of the mixing study, without a window: a ball thrown at a point of a joint's envelope,
caught when the joint (a hand) is within reach of it as it arrives.

The player only moves the mix; :class:`CatchGame` throws each ball at a
point some mix of the envelope reaches at a frame still ahead, flies it along
a parabola onto that point, and when the ball arrives judges the hand's
position then.  Positions are in any one space (the envelope's).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..rotations import FloatArray

REACH = 0.08  # of the figure's height: a hand this near the ball at its arrival catches it
FLIGHT = 1.0  # seconds a ball flies
LEAD = 0.5  # seconds: a ball arrives up to this much later than a flight after it is thrown
MIX_STEP = 0.05  # a key press or wheel notch moves the mix this much
UP = np.array([0.0, 0.0, 1.0])


@dataclass
class Ball:
    """A ball's flight: thrown at ``start`` from ``origin``, arriving at ``arrival`` on ``target``."""

    origin: FloatArray  # (3,)
    target: FloatArray  # (3,)
    start: int  # frame index
    arrival: int  # frame index
    height: float  # how high the arc rises above the straight line
    mix: float  # the mix whose path passes through the target at the arrival
    up: FloatArray  # (3,) the way the arc rises

    def position(self, frame: float) -> FloatArray:
        """Where the ball is at ``frame`` (on the parabola; past its arrival, at its target)."""
        share = float(np.clip((frame - self.start) / max(self.arrival - self.start, 1), 0.0, 1.0))
        return self.origin + share * (self.target - self.origin) + 4.0 * self.height * share * (1.0 - share) * self.up


@dataclass
class CatchGame:
    """Throws balls at points of ``paths`` (a joint's envelope ``(M, F, 3)`` for ``mixes`` ``(M,)``), judges
    each at its arrival against the hand, and keeps score."""

    paths: FloatArray
    mixes: FloatArray
    frame_time: float
    size: float  # the figure's height
    up: FloatArray = field(default_factory=lambda: UP.copy())
    seed: int = 0
    caught: int = 0
    missed: int = 0
    ball: Ball | None = None
    last: str = ""  # "caught", "missed" or "" before the first judgement

    def __post_init__(self) -> None:
        self.random = np.random.default_rng(self.seed)

    @property
    def score(self) -> str:
        return f"{self.caught} caught, {self.missed} missed"

    def throw(self, frame: int) -> Ball | None:
        """A new ball thrown at ``frame`` toward a point of a random mix's path a flight later (``None`` when
        the clip ends too soon)."""
        frames = self.paths.shape[1]
        arrival = frame + max(1, round((FLIGHT + LEAD * self.random.random()) / self.frame_time))
        if arrival >= frames:
            return None
        choice = int(self.random.integers(len(self.mixes)))
        target = self.paths[choice, arrival]
        side = np.cross(self.up, np.append(self.random.normal(size=2), 0.0))
        side = side / max(float(np.linalg.norm(side)), 1e-12)
        origin = target + 2.0 * self.size * side
        self.ball = Ball(origin, target.copy(), frame, arrival, 0.5 * self.size, float(self.mixes[choice]), self.up)
        return self.ball

    def step(self, frame: int, hand: FloatArray) -> str:
        """Advance to ``frame`` with the hand at ``hand``: judges the ball that has arrived ("caught" or
        "missed"), throws a new one when none flies; returns the judgement made now, else ""."""
        judged = ""
        if self.ball is not None and frame >= self.ball.arrival:
            distance = float(np.linalg.norm(np.asarray(hand) - self.ball.position(self.ball.arrival)))
            judged = "caught" if distance <= REACH * self.size else "missed"
            self.caught += judged == "caught"
            self.missed += judged == "missed"
            self.last, self.ball = judged, None
        if self.ball is None or frame < self.ball.start:
            self.throw(frame)
        return judged


def moved_mix(mix: float, notches: int) -> float:
    """The mix after ``notches`` key presses or wheel notches (up positive), kept within 0..1."""
    return float(np.clip(round((mix + notches * MIX_STEP) / MIX_STEP) * MIX_STEP, 0.0, 1.0))
