# profile-memory recipe.  Run:  make smoke-profile-memory | make demo-profile-memory | make reproduce-profile-memory | make bench-profile-memory
# (or standalone: make -f recipes/profile-memory.mk smoke-profile-memory MLX26=mlx26)
# All modelled GPU/FPGA figures are MODELLED from DeviceSpecs; --device fpga runs the HLS kernels
# under g++ emulation (functional), never on a card. tiny-llama-long is random init: timing only.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
PMEM_DIR := $(OUT)/profile-memory

.PHONY: smoke-profile-memory demo-profile-memory reproduce-profile-memory bench-profile-memory
SMOKES += smoke-profile-memory
DEMOS += demo-profile-memory
BENCHES += bench-profile-memory

# Quest on the small shipped model, CPU: seven records (setup, five stages, total).
$(PMEM_DIR)/quest-cpu.jsonl:
	mkdir -p $(@D)
	$(MLX26) profile-memory --pipeline quest --model tiny-llama --context 256 --decode-steps 2 --budget 64 \
	  --seed $(SEED) -q --format jsonl -o $@ --force

# The same through the HLS kernels (g++ emulation); the RAG top-k agrees with the exact-search anchor.
$(PMEM_DIR)/all-fpga.jsonl:
	mkdir -p $(@D)
	$(MLX26) profile-memory --pipeline all --device fpga --fpga-backend emu --model tiny-llama --context 600 \
	  --decode-steps 1 --budget 64 --seed $(SEED) -q --format jsonl -o $@ --force

smoke-profile-memory: $(PMEM_DIR)/quest-cpu.jsonl $(PMEM_DIR)/all-fpga.jsonl
	test "$$(wc -l < $(PMEM_DIR)/quest-cpu.jsonl)" -eq 7
	test "$$(grep -c '"stage": "total"' $(PMEM_DIR)/all-fpga.jsonl)" -eq 4
	grep -q '"topk_matches_anchor": true' $(PMEM_DIR)/all-fpga.jsonl
	@echo "smoke-profile-memory: quest on CPU and all four pipelines through the emulated HLS kernels"

demo-profile-memory:
	$(MLX26) profile-memory --pipeline quest --model tiny-llama-long --context 4096 --decode-steps 4 --budget 512 \
	  --format table

# Every pipeline at 8k on tiny-llama-long, modelled for the paper's MI210 + U55C pair, overlap on and off.
$(PMEM_DIR)/all-8k-overlap.jsonl:
	mkdir -p $(@D)
	$(MLX26) profile-memory --pipeline all --model tiny-llama-long --context 8192 --decode-steps 4 --budget 1024 \
	  --seed $(SEED) -q --format jsonl -o $@ --force

$(PMEM_DIR)/all-8k-no-overlap.jsonl:
	mkdir -p $(@D)
	$(MLX26) profile-memory --pipeline all --model tiny-llama-long --context 8192 --decode-steps 4 --budget 1024 \
	  --no-overlap --seed $(SEED) -q --format jsonl -o $@ --force

reproduce-profile-memory: $(PMEM_DIR)/all-8k-overlap.jsonl $(PMEM_DIR)/all-8k-no-overlap.jsonl
	@echo "wrote $^"

bench-profile-memory:
	$(PY) benchmarks/profile_memory.py

# Build the FPGA bitstream for an Alveo U55C with Vitis (not run here: no Vitis, no card). Compile each
# HLS kernel to an .xo, then link with the HBM connectivity of fpga/hls/u55c.cfg; the result is the
# --xclbin of `mlx26 profile-memory --device fpga --fpga-backend xrt`. Exit 3 when v++ is absent.
U55C_PLATFORM ?= xilinx_u55c_gen3x16_xdma_3_202210_1
XCLBIN_DIR := $(PMEM_DIR)/xclbin
HLS_KERNELS := page_minmax page_score topk_select gather_rows
.PHONY: xclbin-profile-memory
xclbin-profile-memory:
	@command -v v++ >/dev/null || { echo "xclbin-profile-memory: v++ not found (source <Vitis>/settings64.sh and /opt/xilinx/xrt/setup.sh)"; exit 3; }
	mkdir -p $(XCLBIN_DIR)
	for k in $(HLS_KERNELS); do \
	  v++ -c -t hw --platform $(U55C_PLATFORM) -k $$k -I fpga/hls -o $(XCLBIN_DIR)/$$k.xo fpga/hls/$$k.cpp; \
	done
	v++ -l -t hw --platform $(U55C_PLATFORM) --config fpga/hls/u55c.cfg -o $(XCLBIN_DIR)/memproc.xclbin \
	  $(addprefix $(XCLBIN_DIR)/,$(addsuffix .xo,$(HLS_KERNELS)))
	@echo "xclbin-profile-memory: $(XCLBIN_DIR)/memproc.xclbin (pass it as --xclbin)"
