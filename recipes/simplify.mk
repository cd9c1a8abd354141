# simplify recipe.  Run:  make smoke-simplify | make demo-simplify | make reproduce-simplify | make bench-simplify
# (or standalone: make -f recipes/simplify.mk smoke-simplify MLX26=mlx26)
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
SIMPLIFY_DIR := $(OUT)/simplify

.PHONY: smoke-simplify demo-simplify reproduce-simplify bench-simplify
SMOKES += smoke-simplify
DEMOS += demo-simplify
BENCHES += bench-simplify

$(SIMPLIFY_DIR)/exprs.txt:
	mkdir -p $(@D)
	printf '%s\n' 'x1*x2/x2' 'x1 - x1' 'neg(neg(x1))' 'x1 + x1' 'exp(log(x1))' 'x3*sin(2+1)/(x3*x3)' > $@

$(SIMPLIFY_DIR)/simplified.jsonl: $(SIMPLIFY_DIR)/exprs.txt
	$(MLX26) simplify $< --strict -o $@ --force

# Simplifying the simplified output again changes nothing (idempotence on the known cases).
$(SIMPLIFY_DIR)/twice.jsonl: $(SIMPLIFY_DIR)/simplified.jsonl
	$(MLX26) io convert $< --format jsonl | $(MLX26) simplify - --input-format jsonl -o $@ --force

smoke-simplify: $(SIMPLIFY_DIR)/simplified.jsonl
	test "$$(grep -c '"len_out"' $<)" = 6
	$(MLX26) simplify equiv 'x1*(x2+1)' 'x1*x2 + x1' --format json > /dev/null
	@echo "smoke-simplify: 6 expressions simplified; equivalence check passes"

demo-simplify: $(SIMPLIFY_DIR)/exprs.txt
	$(MLX26) simplify $< --format table
	$(MLX26) simplify $< --mode lossy --mask-constants --format table

# The shipped rule file, regenerated from the parameters recorded in its provenance.
$(SIMPLIFY_DIR)/rules.json:
	mkdir -p $(@D)
	$(MLX26) simplify mine --max-len 5 --n-vars 2 --seed $(SEED) -o $@ --force

reproduce-simplify: $(SIMPLIFY_DIR)/rules.json
	cmp $< core/simplify/rules/default.json && echo "reproduce-simplify: shipped rules regenerate byte-identically"

# One run: speed/length vs sympy.simplify, soundness (random set, sympy's own test inputs, a corpus),
# the mined rules' contribution, decontamination recall, throughput.  SimpliPy's real corpus:
# make bench-simplify SIMPLIFY_CORPUS=path/to/raw_skeletons.json
SIMPLIFY_CORPUS ?=
bench-simplify:
	$(PY) benchmarks/simplify.py --n 1000 --seed $(SEED) --throughput-n 100000 $(if $(SIMPLIFY_CORPUS),--corpus $(SIMPLIFY_CORPUS))
