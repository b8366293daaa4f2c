"""Motion graphs, the third part of the motion-synthesis thesis: transitions between the frames of a
library of clips, and new motion made by following them.

- :func:`build` / :class:`MotionGraph` / :func:`load_graph` (:mod:`.graph`, on
  :mod:`.frame_matching`: the distance and the frames that match): the pruning rules, the graph and its
  file;
- :func:`synthesize` (:mod:`.synthesis`): a walk over the graph, blended at every transition;
- :func:`follow` (:mod:`.path_following`): a walk over the graph along a drawn ground path;
- :func:`prune` (:mod:`.pruning`): a stretch cut out of made motion, the rest joined through the graph;
- :func:`plot` (:mod:`.plots`): the thesis's graphs as PNG files (needs matplotlib).
"""

from __future__ import annotations

from .graph import MotionGraph, Transition, build, load_graph
from .path_following import follow
from .plots import PLOT_KINDS, plot
from .pruning import prune
from .synthesis import assemble, synthesize, transition_steps, walk

__all__ = ["PLOT_KINDS", "MotionGraph", "Transition", "assemble", "build", "follow", "load_graph", "plot", "prune",
           "synthesize", "transition_steps", "walk"]
