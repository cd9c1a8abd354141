# SmartThinker recipe (reward length, train grpo, data arith).
# Run:  make smoke-smartthinker | make demo-smartthinker | make bench-smartthinker (= bench-train-grpo)
# (or standalone: make -f recipes/smartthinker.mk smoke-smartthinker MLX26=mlx26)
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
ST_DIR := $(OUT)/smartthinker

.PHONY: smoke-smartthinker demo-smartthinker bench-smartthinker bench-train-grpo
SMOKES += smoke-smartthinker
DEMOS += demo-smartthinker
BENCHES += bench-smartthinker

$(ST_DIR)/demo.jsonl:
	mkdir -p $(@D)
	$(MLX26) reward length --demo --format jsonl -o $@ --force

# The issue's worked example: alpha ≈ 0.00127 and reward(500) equals the group mean ≈ 0.4788.
smoke-smartthinker: $(ST_DIR)/demo.jsonl
	$(PY) -c 'import json,sys; g=[r for r in map(json.loads, open(sys.argv[1])) if r["group"]=="worked-example"]; \
	  m=sum(r["reward"] for r in g)/len(g); r5=[r["reward"] for r in g if r["length"]==500][0]; \
	  assert abs(g[0]["alpha"]-0.00127)<5e-6 and abs(r5-m)<1e-6 and abs(m-0.4788)<1e-4, (g[0]["alpha"], r5, m)' $<
	$(MLX26) data arith --n 4 --seed $(SEED) --format jsonl | $(PY) -c 'import json,sys; \
	  rows=[json.loads(l) for l in sys.stdin]; assert len(rows)==4 and all(r["verbose"].endswith("Answer: %d" % r["answer"]) for r in rows)'
	@echo "smoke-smartthinker: worked example alpha = 0.00127, reward(500) = group mean = 0.4788; data arith ok"

# ≤ 30 s: the reward on the example groups, then a micro GRPO run (TRL, CPU) from a 4-step warm-up.
demo-smartthinker:
	$(MLX26) reward length --demo --format table
	$(MLX26) train grpo --preset micro --seed $(SEED) --out $(ST_DIR)/demo-run --force --quiet | tail -n 2

# SmartThinker vs none vs Kimi from one warm-up (minutes; figures in docs/smartthinker.md).
bench-smartthinker:
	$(PY) benchmarks/smartthinker.py --seed $(SEED) --out $(ST_DIR)/bench

bench-train-grpo: bench-smartthinker
