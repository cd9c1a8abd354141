# Recipe template (I/O contract).  Run:  make smoke-io   or   make -f recipes/io.mk smoke-io MLX26=mlx26
# Conventions every recipe follows: strict bash, .DELETE_ON_ERROR, overridable SEED and OUT,
# intermediate files as targets (reruns resume), one pipeline of mlx26 commands per rule.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
IO_DIR := $(OUT)/io

.PHONY: smoke-io demo-io
SMOKES += smoke-io
DEMOS += demo-io

$(IO_DIR)/records.csv:
	mkdir -p $(@D)
	printf 'id,name,score\n1,alpha,0.5\n2,"beta, gamma",1.25\n3,delta,-3\n' > $@

$(IO_DIR)/records.jsonl: $(IO_DIR)/records.csv
	$(MLX26) io convert $< --detect-types --format jsonl -o $@ --force

$(IO_DIR)/roundtrip.csv: $(IO_DIR)/records.jsonl
	cat $< | $(MLX26) io convert - --format csv -o $@ --force

# CSV → JSONL → CSV must give back the same bytes.
smoke-io: $(IO_DIR)/roundtrip.csv
	diff $(IO_DIR)/records.csv $<
	@echo "smoke-io: CSV → JSONL → CSV round-trip is byte-identical"

demo-io: $(IO_DIR)/records.jsonl
	$(MLX26) io convert $< --format table
