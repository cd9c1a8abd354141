# spec-bench recipe (SPEED-Bench).  Run:  make smoke-spec-bench | make demo-spec-bench | make bench-spec-bench
# (or standalone: make -f recipes/spec-bench.mk smoke-spec-bench MLX26=mlx26)
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
SPEC_DIR := $(OUT)/spec-bench
# Spec-Bench's 480 prompts, read in place (never copied into the repository).
SPEC_BENCH ?= $(abspath ../shared/data/spec-bench/question.jsonl)

.PHONY: smoke-spec-bench demo-spec-bench bench-spec-bench
SMOKES += smoke-spec-bench
DEMOS += demo-spec-bench
BENCHES += bench-spec-bench

$(SPEC_DIR)/run.json:
	mkdir -p $(@D)
	$(MLX26) spec-bench run --per-category 1 --max-tokens 8 --check-greedy --seed $(SEED) -o $@ --force -q

# Embedded pool: greedy match + AL bounds; in-process `llm serve --draft` sweep: counter AL = engine-log AL;
# Spec-Bench prompts (when ../shared/data/spec-bench exists): prompt lookup greedy match.
smoke-spec-bench: $(SPEC_DIR)/run.json
	$(PY) -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; assert s["greedy_match"] is True and 1 <= s["acceptance_length"] <= 5, s' $<
	$(MLX26) spec-bench serve-bench --serve tiny-llama -k 3 -c 1 -c 2 --requests 2 --max-tokens 8 --limit 3 --format jsonl -q | \
	  $(PY) -c 'import json,sys; rows=[json.loads(l) for l in sys.stdin]; assert len(rows) == 2 and all(r["ok"] == r["requests"] and abs(r["acceptance_length"] - r["engine_log_acceptance_length"]) < 1e-9 for r in rows), rows'
	@if [ -f "$(SPEC_BENCH)" ]; then \
	  $(MLX26) spec-bench run $(SPEC_BENCH) --engine prompt-lookup --per-category 1 --limit 4 --max-tokens 8 --truncate-prompt-tokens 256 --format json -q | \
	    $(PY) -c 'import json,sys; s=json.load(sys.stdin)["summary"]; assert s["greedy_match"] is True and s["prompts"] == 4, s'; \
	else echo "smoke-spec-bench: $(SPEC_BENCH) not found: Spec-Bench check skipped"; fi
	@echo "smoke-spec-bench: greedy match on the embedded pool and Spec-Bench; server counter AL equals the engine log"

# Embedded pool (text the project already has): diversity split, one engine vs plain, the merged report.
demo-spec-bench: $(SPEC_DIR)/run.json
	$(MLX26) spec-bench select --embedder tfidf -n 5 --save $(SPEC_DIR)/split.jsonl --force --format table
	$(MLX26) spec-bench report $< --format table
	@echo "demo-spec-bench: tiny zoo models on CPU; wall speedups are CPU-specific"

bench-spec-bench:
	$(PY) benchmarks/spec_bench.py --seed $(SEED) --out $(SPEC_DIR)/bench $(if $(wildcard $(SPEC_BENCH)),--prompts $(SPEC_BENCH))
