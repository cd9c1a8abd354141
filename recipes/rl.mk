# rl recipe.  Run:  make smoke-rl | make demo-rl | make reproduce-rl | make bench-rl
# (or standalone: make -f recipes/rl.mk smoke-rl MLX26=mlx26)
# Needs the extras rl (gymnasium) and, for reproduce-rl, ogbench (+ mujoco); bench-rl uses sb3.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
RL_DIR := $(OUT)/rl
# Tiny networks so the smoke run takes seconds on a CPU.
RL_TINY := --set preset=small --set actor_hidden=32,32 --set value_hidden=32,32 --set batch_size=32
RL_TOY := --set preset=small --set actor_hidden=128,128 --set value_hidden=128,128 --set batch_size=128
CUBE_STEPS ?= 5000
CUBE_SEEDS ?= 3

.PHONY: smoke-rl demo-rl reproduce-rl bench-rl alpha-rl
SMOKES += smoke-rl
DEMOS += demo-rl
BENCHES += bench-rl

$(RL_DIR)/toy-small.npz:
	mkdir -p $(@D)
	$(MLX26) rl data make --env mlx26/toy-modes --steps 300 --seed $(SEED) --out $@ --force --quiet > /dev/null

$(RL_DIR)/smoke-dfql/checkpoint.pt: $(RL_DIR)/toy-small.npz
	$(MLX26) train rl --algo dfql --env mlx26/toy-modes --dataset $< --steps 20 $(RL_TINY) --set log_every=10 \
	  --eval-episodes 4 --seed $(SEED) --out $(@D) --force --quiet > $(@D).jsonl

# Offline DFQL on a generated dataset → checkpoint → `rl eval` reproduces the training evaluation;
# the run also logged metrics.csv and TensorBoard files, `rl plot` draws it, `rl data convert`
# round-trips the dataset; a DQN run streams JSONL.
smoke-rl: $(RL_DIR)/smoke-dfql/checkpoint.pt
	$(MLX26) rl eval --checkpoint $(<D) --format json --quiet | grep -q '"matches_training_eval": true'
	test -s $(<D)/metrics.csv && ls $(<D)/tb | grep -q events
	$(MLX26) rl plot $(<D) -o $(RL_DIR)/smoke-curve.png --metric critic_loss --force --quiet --format json \
	  | grep -q '"seeds": 1'
	$(MLX26) rl data convert $(RL_DIR)/toy-small.npz --out $(RL_DIR)/toy-conv.npz --force --quiet --format json \
	  | grep -q '"source_format": "mlx26"'
	$(MLX26) train rl --algo dqn --env CartPole-v1 --steps 150 --set learning_starts=100 --set train_freq=50 \
	  --set gradient_steps=4 --eval-episodes 2 --seed $(SEED) --out $(RL_DIR)/smoke-dqn --force --quiet \
	  | tail -n 1 | grep -q '"phase": "eval"'
	@echo "smoke-rl: dfql checkpoint evaluates reproducibly, logs plot, data converts; dqn streams metrics"

$(RL_DIR)/toy.npz:
	mkdir -p $(@D)
	$(MLX26) rl data make --env mlx26/toy-modes --steps 20000 --seed $(SEED) --out $@ --force --quiet > /dev/null

# DFQL vs FQL on toy-modes (the best mode is rewarded most; eval_return ≤ 1).
demo-rl: $(RL_DIR)/toy.npz
	for algo in fql dfql; do \
	  alpha=$$([ $$algo = dfql ] && echo 0.1 || echo 10); \
	  $(MLX26) train rl --algo $$algo --env mlx26/toy-modes --dataset $< --steps 1000 --alpha $$alpha $(RL_TOY) \
	    --set log_every=1000 --eval-episodes 50 --seed $(SEED) --out $(RL_DIR)/demo-$$algo --force --quiet \
	    | tail -n 1; \
	done

# OGBench cube-single (task 2) on locally generated oracle data: DFQL vs FQL, CUBE_SEEDS seeds, equal steps.
$(RL_DIR)/cube-single-play-v0.npz:
	mkdir -p $(@D)
	$(MLX26) rl data make --env ogbench:cube-single-singletask-task2-v0 --policy oracle --noise 0.1 \
	  --steps 100000 --seed $(SEED) --out $@ --force --quiet > $(RL_DIR)/cube-data.json

reproduce-rl: $(RL_DIR)/cube-single-play-v0.npz
	$(PY) benchmarks/rl.py --part cube --dataset $< --cube-steps $(CUBE_STEPS) --seeds $(CUBE_SEEDS)

# FQL vs DFQL α sweep on toy-modes through the CLI's path (rl sweep; 300 BC + 400 steps), ALPHA_SEEDS seeds.
ALPHA_SEEDS ?= 3
alpha-rl:
	$(PY) benchmarks/rl.py --part alpha --seeds $(ALPHA_SEEDS)

bench-rl:
	$(PY) benchmarks/rl.py
