# llm recipe.  Run:  make smoke-llm | make demo-llm | make bench-llm
# (or standalone: make -f recipes/llm.mk smoke-llm MLX26=mlx26)
# LLM_SPEC picks the backend of the smoke test and the demo chat (default: the shipped scripted rules);
# LLM_DEMO_SPEC the backend the demo serves (default: the zoo's tiny-llama, whose text is meaningless), e.g.
#   make demo-llm LLM_SPEC=openai:http://127.0.0.1:8000/v1#MODEL
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
LLM_DIR := $(OUT)/llm
LLM_SPEC ?= scripted:demo
LLM_DEMO_SPEC ?= hf:tiny-llama
LLM_PROMPTS := 'hello' 'What is 2+2?' 'say: recorded once, replayed offline'

.PHONY: smoke-llm demo-llm bench-llm
SMOKES += smoke-llm
DEMOS += demo-llm
BENCHES += bench-llm

# The server answers a 429 first; the built-in client must retry and pass every check.
$(LLM_DIR)/selftest.json:
	mkdir -p $(@D)
	$(MLX26) llm serve --llm $(LLM_SPEC) --self-test --fault 429 --fault-count 1 --retry-after 0 --quiet --format json > $@

# Record a short session (with a ledger), then replay it: the replay needs no backend at all.
$(LLM_DIR)/recorded.txt:
	mkdir -p $(@D)
	rm -f $(LLM_DIR)/calls.jsonl $(LLM_DIR)/ledger.jsonl
	for prompt in $(LLM_PROMPTS); do \
	  $(MLX26) llm chat --llm "record:$(LLM_DIR)/calls.jsonl=$(LLM_SPEC)" "$$prompt" --seed $(SEED) --max-tokens 32 \
	    --ledger $(LLM_DIR)/ledger.jsonl --budget-tokens 2000 --purpose smoke --quiet; \
	done > $@

$(LLM_DIR)/replayed.txt: $(LLM_DIR)/recorded.txt
	for prompt in $(LLM_PROMPTS); do \
	  $(MLX26) llm chat --llm "replay:$(LLM_DIR)/calls.jsonl" "$$prompt" --seed $(SEED) --max-tokens 32 --quiet; \
	done > $@

$(LLM_DIR)/ledger-summary.csv: $(LLM_DIR)/recorded.txt
	$(MLX26) llm ledger $(LLM_DIR)/ledger.jsonl --format csv -o $@ --force

smoke-llm: $(LLM_DIR)/selftest.json $(LLM_DIR)/replayed.txt $(LLM_DIR)/ledger-summary.csv
	grep -q '"ok": true' $(LLM_DIR)/selftest.json
	diff $(LLM_DIR)/recorded.txt $(LLM_DIR)/replayed.txt
	test "$$(tail -n 1 $(LLM_DIR)/ledger-summary.csv | cut -d, -f1,2)" = "TOTAL,3"
	@echo "smoke-llm: self-test passed after a 429; 3 recorded calls replay identically; ledger totals 3 calls"

# A chat, then the served model checked end to end through a 429 and a 500 (both retried).
demo-llm:
	$(MLX26) llm chat --llm $(LLM_SPEC) "What is the capital of France?" --format table
	HF_HUB_OFFLINE=1 $(MLX26) llm serve --llm $(LLM_DEMO_SPEC) --self-test --fault 429 --fault 500 --fault-count 2 \
	  --retry-after 0 --quiet --format table

bench-llm:
	$(PY) benchmarks/llm.py
