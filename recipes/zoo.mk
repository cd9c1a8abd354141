# zoo recipe.  Run:  make smoke-zoo | make demo-zoo | make reproduce-zoo | make bench-zoo
# (or standalone: make -f recipes/zoo.mk smoke-zoo MLX26=mlx26)
# reproduce-zoo rebuilds the shipped tokenizer and four shipped models (tiny-llama, tiny-llama-pkgs,
# tiny-llama-draft, tiny-moe) into $(OUT)/zoo (about 30 CPU-minutes on one thread) and scores each next to
# xz / bz2 / gzip. tiny-llama-pkgs reads the installed packages' sources: the same text only where the
# same distributions and versions are installed.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
ZOO_DIR := $(OUT)/zoo

.PHONY: smoke-zoo demo-zoo reproduce-zoo bench-zoo
SMOKES += smoke-zoo
DEMOS += demo-zoo
BENCHES += bench-zoo

# A micro model (byte tokenizer, seconds) through train → eval; the shipped zoo resolves.
$(ZOO_DIR)/micro/manifest.json:
	mkdir -p $(ZOO_DIR)
	$(MLX26) zoo train micro-llama --steps 8 --seed $(SEED) --max-train-bytes 40000 --eval-bytes 4000 \
	  --out $(@D) --force --quiet --format json > /dev/null

$(ZOO_DIR)/micro-eval.jsonl: $(ZOO_DIR)/micro/manifest.json
	$(MLX26) zoo eval $(<D) --max-bytes 4000 --format jsonl -o $@ --force

smoke-zoo: $(ZOO_DIR)/micro-eval.jsonl
	test "$$(wc -l < $<)" -eq 4
	test -f "$$($(MLX26) zoo path tiny-llama)/model.safetensors"
	$(MLX26) zoo list --format jsonl | grep -q '"tiny-moe"'
	@echo "smoke-zoo: micro model trained and scored; shipped zoo resolves"

demo-zoo:
	$(MLX26) zoo list --format table
	$(MLX26) zoo eval tiny-llama --max-bytes 65536 --format table
	$(MLX26) zoo eval tiny-moe --max-bytes 65536 --format table

$(ZOO_DIR)/bpe-4096/tokenizer.json:
	$(MLX26) zoo tokenizer --out $(@D) --force > /dev/null

# The commands recorded in the shipped manifests, with the output moved under $(OUT).
$(ZOO_DIR)/models/tiny-llama/manifest.json:
	$(MLX26) zoo train tiny-llama --minutes 12 --seed $(SEED) --out $(@D) --force --format json > $(ZOO_DIR)/tiny-llama.train.json

$(ZOO_DIR)/models/tiny-llama-pkgs/manifest.json:
	$(MLX26) zoo train tiny-llama-pkgs --minutes 12 --seed $(SEED) --out $(@D) --force --format json > $(ZOO_DIR)/tiny-llama-pkgs.train.json

$(ZOO_DIR)/models/tiny-llama-draft/manifest.json:
	$(MLX26) zoo train tiny-llama-draft --minutes 2 --seed $(SEED) --out $(@D) --force --format json > $(ZOO_DIR)/tiny-llama-draft.train.json

$(ZOO_DIR)/models/tiny-moe/manifest.json:
	$(MLX26) zoo train tiny-moe --minutes 3.5 --seed $(SEED) --out $(@D) --force --format json > $(ZOO_DIR)/tiny-moe.train.json

$(ZOO_DIR)/%.eval.csv: $(ZOO_DIR)/models/%/manifest.json
	$(MLX26) zoo eval $(<D) --format csv -o $@ --force

reproduce-zoo: $(ZOO_DIR)/bpe-4096/tokenizer.json $(ZOO_DIR)/tiny-llama.eval.csv $(ZOO_DIR)/tiny-llama-pkgs.eval.csv \
  $(ZOO_DIR)/tiny-llama-draft.eval.csv $(ZOO_DIR)/tiny-moe.eval.csv
	cmp $(ZOO_DIR)/bpe-4096/tokenizer.json "$$($(MLX26) zoo path tiny-llama)/tokenizer.json" \
	  && echo "tokenizer rebuilt byte-identical to the shipped one"
	@for f in $(filter %.csv,$^); do echo "== $$f"; cat $$f; done

bench-zoo:
	$(PY) benchmarks/zoo.py
