# fmri recipe (Omni-fMRI).  Run:  make smoke-fmri | make demo-fmri | make bench-fmri
# (or standalone: make -f recipes/fmri.mk smoke-fmri MLX26=mlx26)
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
FMRI_DIR := $(OUT)/fmri
# A real 4D file shipped inside the nibabel package (tests/data/functional.nii; anisotropic 4x4x8 mm voxels).
FMRI_REAL = $(shell $(PY) -c 'import nibabel, os; print(os.path.join(os.path.dirname(nibabel.__file__), "tests", "data", "functional.nii"))')

.PHONY: smoke-fmri demo-fmri bench-fmri
SMOKES += smoke-fmri
DEMOS += demo-fmri
BENCHES += bench-fmri

$(FMRI_DIR)/real_clips.npz:
	mkdir -p $(@D)
	$(MLX26) fmri preprocess $(FMRI_REAL) --npz $@ --size 16 --frames 4 --force --format json > $(FMRI_DIR)/real_preprocess.json

# Real file: preprocess (anisotropic voxels → resampled) + tokenize; every foreground voxel is covered once.
smoke-fmri: $(FMRI_DIR)/real_clips.npz
	$(PY) -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["clips"] >= 1 and r["shape"] == [4, 16, 16, 16], r' \
	  $(FMRI_DIR)/real_preprocess.json
	$(MLX26) fmri tokenize $(FMRI_REAL) --tau 0.25 --npz $(FMRI_DIR)/real_tokens.npz --force --format json -q | \
	  $(PY) -c 'import json,sys; r=json.load(sys.stdin); assert r["tokens"] > 0 and r["foreground_voxels_covered"] == r["foreground_voxels"] and r["voxels_covered_twice"] == 0, r'
	$(MLX26) fmri tokenize $< --format csv -q > $(FMRI_DIR)/real_tokens.csv
	@echo "smoke-fmri: nibabel's functional.nii preprocessed and tokenised; foreground partitioned exactly"

# SYNTHETIC end to end in well under a minute: synth → preprocess → tokenize → show → pretrain → probe.
demo-fmri:
	mkdir -p $(FMRI_DIR)
	$(MLX26) fmri synth $(FMRI_DIR)/synth --subjects 3 --runs 1 --frames 24 --seed $(SEED) --force --format table
	$(MLX26) fmri preprocess $(FMRI_DIR)/synth --npz $(FMRI_DIR)/clips.npz --size 32 --frames 8 --force --format table
	$(MLX26) fmri tokenize $(FMRI_DIR)/clips.npz --tau 0.25 --format csv | head -3
	@if $(PY) -c 'import matplotlib' 2>/dev/null; then \
	  $(MLX26) fmri show $(FMRI_DIR)/clips.npz --png $(FMRI_DIR)/slice.png --force --format json -q > /dev/null; \
	else echo "demo-fmri: matplotlib is not installed: 'fmri show' skipped (pip install 'mlx26[fmri]')"; fi
	$(MLX26) fmri pretrain $(FMRI_DIR)/clips.npz --save $(FMRI_DIR)/mae.pt --steps 10 --dim 32 --seed $(SEED) --force --format table -q
	$(MLX26) fmri probe $(FMRI_DIR)/clips.npz --model $(FMRI_DIR)/mae.pt --label subject --seed $(SEED) --format table
	@echo "demo-fmri: SYNTHETIC data; slice with patches in $(FMRI_DIR)/slice.png"

bench-fmri:
	$(PY) benchmarks/fmri.py  # seeds 0 1 2 (--seeds); the results file was made so
