"""Whole libraries: a parallel, resumable batch over folders of takes, without Blender.

``python -m mocap_addon.core batch INPUT... -o OUT_DIR --to bvh|htr|amc [options]`` (see
:mod:`.cli`) or :func:`run_batch`.  Takes are found and placed by :mod:`.plan`, converted one
per task by :mod:`.convert` on the standard library's process pool or a Dask cluster
(:mod:`.executors`), and remembered in the output folder's manifest (:mod:`.manifest`) so a
rerun does only what is missing or changed; :mod:`.index` writes the previews' ``index.html``.
"""

from .convert import Outcome, Settings, convert_job
from .plan import TARGETS, Job, plan
from .run import BatchError, Summary, run_batch

__all__ = ["TARGETS", "BatchError", "Job", "Outcome", "Settings", "Summary", "convert_job", "plan", "run_batch"]
