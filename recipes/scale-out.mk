# Scale-out (issue 41): record streams on Ray Data, training under torchrun.  Run:  make smoke-scale-out
# Same conventions as recipes/io.mk: strict bash, .DELETE_ON_ERROR, overridable SEED and OUT.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
SCALE_DIR := $(OUT)/scale-out

.PHONY: smoke-scale-out demo-scale-out bench-scale-out
SMOKES += smoke-scale-out
DEMOS += demo-scale-out
BENCHES += bench-scale-out

$(SCALE_DIR)/exprs.txt:
	mkdir -p $(@D)
	printf 'x1*x2/x2\nsin(x1)**2 + cos(x1)**2\nx1 - x1\nlog(exp(x2))\n(x1 + x1)*x3\n' > $@

$(SCALE_DIR)/local.jsonl: $(SCALE_DIR)/exprs.txt
	$(MLX26) simplify run $< --format jsonl -q -o $@ --force

$(SCALE_DIR)/ray.jsonl: $(SCALE_DIR)/exprs.txt
	$(MLX26) simplify run $< --engine ray --num-cpus 2 --batch-size 2 --format jsonl -q -o $@ --force

# The same records through Ray Data (local mode, batches of 2) must give the same bytes as locally.
smoke-scale-out: $(SCALE_DIR)/local.jsonl $(SCALE_DIR)/ray.jsonl
	cmp $^
	@echo "smoke-scale-out: simplify run on Ray Data is byte-identical to --engine local"

demo-scale-out: $(SCALE_DIR)/ray.jsonl
	$(MLX26) io convert $< --format table

# records/s local vs Ray (1 and 2 CPUs) on simplify run and score-code score; steps/s of zoo train on 1 vs 2
# gloo DDP processes. Results: benchmarks/results/scale_out_{ray,ddp}.json.
bench-scale-out:
	$(PY) benchmarks/scale_out_ray.py
	$(PY) benchmarks/scale_out_ddp.py
