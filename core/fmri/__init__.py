"""Omni-fMRI: atlas-free voxel-level fMRI tokenisation with dynamic patching and a masked-autoencoder
foundation model ("Omni-fMRI: A Universal Atlas-Free fMRI Foundation Model", ICML 2026,
arXiv 2601.23090; upstream code github.com/OneMore1/Omni-fMRI, no licence: read, not copied).

* :mod:`.io` — NIfTI (nibabel) and NPZ loading with the input checks (4D, TR units, NaN/Inf,
  oblique/anisotropic affines), a BIDS-style folder of ``*_bold.nii.gz`` files as a dataset;
* :mod:`.preprocess` — isotropic resampling (nilearn ``resample_img``), pad/crop to a cube, temporal
  interpolation to a target TR, global z-score over non-zero voxels, T-frame clips;
* :mod:`.synth` — a SYNTHETIC 4D generator on nilearn's bundled MNI152 masks (HRF-convolved task
  blocks with ``spm_hrf`` or AR(1) rest, tSNR, drift) with probe labels;
* :mod:`.patching` — the dynamic patching: pooled complexity score per patch (time-averaged spatial
  variance or std), background removal, coarse 8^3 kept when score < tau else fine 4^3; uniform and
  random-coarsening controls; coverage and reconstruction-SSE checks;
* :mod:`.model` — a tiny dual-path MAE (fine linear/Conv3d embedding; coarse = downsampled path +
  zero-initialised MLP over the fine sub-grid; scale embeddings; per-scale decoder heads);
* :mod:`.train` — masked-autoencoder pretraining, embeddings, linear probe (scikit-learn);
* :mod:`.show` — a PNG of a slice with the chosen patches drawn; :mod:`.bench` — the side-by-side runs.

Reconstructed (the paper gives the ideas, the public code the tokenizer): the tokenizer follows the
paper and ``entropy_utils_3d.py`` (score = sqrt(mean_t Var_patch + 1e-6), background = max|x| over
patch and time); the model is a CPU-sized reconstruction of the paper's dual-path embedding and MAE
(no flash-attention varlen packing, a plain padded transformer), the synthetic data are ours.
This ``__init__`` imports nothing heavy (``spec`` is imported by ``mlx26 --help``).
"""
