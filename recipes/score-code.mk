# score-code recipe.  Run:  make smoke-score-code | make demo-score-code | make reproduce-score-code | make bench-score-code | make bench-score-code-cv
# (or standalone: make -f recipes/score-code.mk smoke-score-code MLX26=mlx26)
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
SCORECODE_DIR := $(OUT)/score-code
# The shipped models were trained with these (see core/score_code/models/manifest.json).
SCORECODE_FILES ?= 1200
SCORECODE_EPOCHS ?= 3
# SVEN (eth-sri/sven) is read in place for the real-code benchmark; absent: skipped with a note (an error under CI).
SVEN ?= ../shared/data/sven
HAVE_SVEN = if [ -f $(SVEN)/val/cwe-089.jsonl ]; then :; elif [ -n "$${CI:-}" ]; then \
	  echo "score-code: no SVEN at $(SVEN) (set SVEN=DIR)" >&2; exit 1; else \
	  echo "score-code: no SVEN at $(SVEN): the real-code benchmark in $@ skipped (set SVEN=DIR)"; exit 0; fi

.PHONY: smoke-score-code demo-score-code reproduce-score-code bench-score-code bench-score-code-cv
SMOKES += smoke-score-code
DEMOS += demo-score-code
BENCHES += bench-score-code

$(SCORECODE_DIR)/corpus.jsonl:
	mkdir -p $(@D)
	$(MLX26) score-code corpus --n 20 --seed $(SEED) -o $@ --force

$(SCORECODE_DIR)/verdicts.jsonl: $(SCORECODE_DIR)/corpus.jsonl
	$(PY) -c 'import json,sys,pathlib; d=pathlib.Path(sys.argv[2]); d.mkdir(exist_ok=True); [(d/(r["id"]+".py")).write_text(r["code"]) for r in map(json.loads, open(sys.argv[1]))]' $< $(SCORECODE_DIR)/files
	$(MLX26) score-code detect $(SCORECODE_DIR)/files --agg softmax --quiet -o $@ --force

# 20 synthetic files → 20 verdicts; streaming scores equal batch scores; '# ruleid:' labels land on the right line.
smoke-score-code: $(SCORECODE_DIR)/verdicts.jsonl
	test "$$(grep -c '"vulnerable"' $<)" = 20
	f=$(SCORECODE_DIR)/files/ex00000.py; \
	diff <($(MLX26) score-code score - --segment line < $$f) <($(MLX26) score-code score - --stream --segment line < $$f)
	test "$$(printf 'import os\n# ruleid: shell\nos.system(x)\n' | $(MLX26) score-code label - --annotations --segment line --format jsonl | grep -c '"start_line": 3, "end_line": 3, "text": "os.system(x)", "label": 1')" = 1
	f=$(SCORECODE_DIR)/files/ex00000.py; \
	$(MLX26) score-code export --model linear --onnx $(SCORECODE_DIR)/linear.onnx --force --format json > /dev/null; \
	$(PY) -c 'import json,sys; a,b=[[json.loads(l)["score"] for l in open(p)] for p in sys.argv[1:]]; assert len(a)==len(b)>0 and max(abs(x-y) for x,y in zip(a,b))<1e-9, (a,b)' \
	  <($(MLX26) score-code score $$f --runtime numpy) <($(MLX26) score-code score $$f --onnx $(SCORECODE_DIR)/linear.onnx)
	@echo "smoke-score-code: 20 verdicts; stream = batch; annotation labels in place; exported ONNX = numpy"

demo-score-code: $(SCORECODE_DIR)/verdicts.jsonl
	$(MLX26) score-code detect $(SCORECODE_DIR)/files --unit function --format table
	$(MLX26) score-code score $(SCORECODE_DIR)/files/ex00001.py --format table

# Retrain both models on real code (SVEN + installed library code + a synthetic minority; seeded;
# the transformer takes tens of CPU minutes) and compare with the shipped ones.
$(SCORECODE_DIR)/models/manifest.json:
	mkdir -p $(@D)
	MLX26_THREADS=1 $(MLX26) score-code train --sven $(SVEN) --out $(@D) --epochs $(SCORECODE_EPOCHS) --seed $(SEED) --force --format json > /dev/null

reproduce-score-code: $(SCORECODE_DIR)/models/manifest.json
	$(PY) -c 'import sys, numpy as np; from pathlib import Path; a, b = Path(sys.argv[1]), Path("core/score_code/models"); \
	[print(k, "max |Δ| =", max(float(np.abs(np.load(a/k)[n] - np.load(b/k)[n]).max()) for n in np.load(b/k).files if np.load(b/k)[n].dtype.kind == "f")) for k in ("linear.npz", "transformer.npz")]' $(SCORECODE_DIR)/models

# Synthetic held-out corpus, streaming latency per runtime on a real 2,000-line file, then real code (SVEN test, stdlib false alarms, robustness) side by side.
# How the shipped linear model's settings were chosen: 5-fold CV over SVEN fit + calibration
# (grouped by repository; SVEN val untouched), pair weights 0 1 3 10; about 25 minutes on 2 cores.
bench-score-code-cv:
	@$(HAVE_SVEN); $(PY) benchmarks/score_code_cv.py --sven $(SVEN)

bench-score-code:
	$(PY) benchmarks/score_code.py
	$(PY) benchmarks/score_code_stream.py
	@$(HAVE_SVEN); $(PY) benchmarks/score_code_real.py --sven $(SVEN)
