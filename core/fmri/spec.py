"""The choices and defaults of ``mlx26 fmri`` (standard library only; the CLI imports this at module level)."""

SCORES = ("std", "var")  # complexity score: time-averaged spatial std (public code) or variance
PATCHINGS = ("dynamic", "uniform", "random")  # dynamic = Omni-fMRI; uniform = fine only; random = equal-count control
SYNTH_KINDS = ("task", "rest")
PROBE_LABELS = ("condition", "network", "subject")
NETWORKS = ("visual", "motor", "default-mode", "fronto-parietal")

FINE = 4  # fine patch edge (voxels)
SCALES = 2  # fine 4^3 and coarse 8^3
TAU_PAPER = 0.25  # the paper's threshold
TAU_CODE = 0.23  # configs/pretrain.yaml of the public code
BG_PAPER = 1e-3  # paper / the public visualiser (visual_3d.py)
BG_CODE = 1e-2  # select_patches_by_threshold_3d's default in the public code
MASK_RATIO = 0.75
TR_RANGE = (0.2, 10.0)  # seconds; a header TR outside is implausible (ms headers are converted)
