"""The human body as every motion tool reads it: the reference proportions and T-pose (:mod:`.reference`), how
bones twist and hinges bend (:mod:`.anatomy`), when feet touch the floor (:mod:`.contacts`) and how legs hold them
there (:mod:`.footing`).  Retargeting, blending and motion graphs stand on it; it stands on the model only."""
