# table-decompose recipe.  Run:  make smoke-table-decompose | make demo-table-decompose | make reproduce-table-decompose | make bench-table
# (or standalone: make -f recipes/table-decompose.mk smoke-table-decompose MLX26=mlx26)
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
TABLE_DIR := $(OUT)/table-decompose

.PHONY: smoke-table-decompose demo-table-decompose reproduce-table-decompose bench-table
SMOKES += smoke-table-decompose
DEMOS += demo-table-decompose
BENCHES += bench-table

# The decomposition is deterministic: SEED is unused (kept for the recipe convention).
$(TABLE_DIR)/statcan.lines.txt:
	mkdir -p $(@D)
	$(MLX26) table-decompose --example statcan --quiet -o $@ --force

$(TABLE_DIR)/tab5.%.lines.txt:
	mkdir -p $(@D)
	$(MLX26) table-decompose --example aitqa-tab5-$* --quiet -o $@ --force

$(TABLE_DIR)/eval.small.json:
	mkdir -p $(@D)
	$(MLX26) table-decompose eval --table tab-5 --table tab-6 --table tab-67 --render xlsx --render csv -o $@ --force

# The issue's example line comes out first; one AITQA table read as XLSX, HTML and blank-filled CSV
# gives the same lines; three AITQA tables are recovered exactly from both renderings.
smoke-table-decompose: $(TABLE_DIR)/statcan.lines.txt $(TABLE_DIR)/tab5.xlsx.lines.txt \
		$(TABLE_DIR)/tab5.html.lines.txt $(TABLE_DIR)/tab5.csv.lines.txt $(TABLE_DIR)/eval.small.json
	test "$$(head -1 $<)" = "Aged 2 to 8 years > Food alone > 2004 | Total > Mean grams = 53"
	cmp $(TABLE_DIR)/tab5.xlsx.lines.txt $(TABLE_DIR)/tab5.html.lines.txt
	cmp $(TABLE_DIR)/tab5.xlsx.lines.txt $(TABLE_DIR)/tab5.csv.lines.txt
	test "$$(grep -c '"both_paths_em": 1.0' $(TABLE_DIR)/eval.small.json)" = 2
	@echo "smoke-table-decompose: StatCan line as in the issue; XLSX = HTML = CSV lineage; AITQA subset exact"

demo-table-decompose:
	$(MLX26) table-decompose --example statcan --quiet | head -8
	$(MLX26) table-decompose --example aitqa-tab5-xlsx --emit markdown --quiet | head -8
	$(MLX26) table-decompose --example aitqa-tab67-csv --emit trees --quiet | head -30

# Regenerate the shipped AITQA example renderings, check they decompose exactly like the shipped
# files, and score the whole AITQA set in every rendering.
$(TABLE_DIR)/examples/.done:
	mkdir -p $(@D)
	$(PY) -c 'import sys; from mlx26.core.table_decompose.examples import make_examples; make_examples(sys.argv[1])' $(@D)
	touch $@

$(TABLE_DIR)/eval.aitqa.json:
	mkdir -p $(@D)
	$(MLX26) table-decompose eval --render xlsx --render csv --render html --render csv-indent --render md \
		--per-table -o $@ --force

reproduce-table-decompose: $(TABLE_DIR)/examples/.done $(TABLE_DIR)/eval.aitqa.json
	for name in tab5 tab6 tab67; do \
	  for kind in .html .xlsx _blank.csv; do \
	    cmp <($(MLX26) table-decompose $(TABLE_DIR)/examples/aitqa_$$name$$kind --emit lineage --format jsonl --quiet) \
	        <($(MLX26) table-decompose core/table_decompose/data/examples/aitqa_$$name$$kind --emit lineage --format jsonl --quiet); \
	  done; \
	done
	@echo "reproduce-table-decompose: regenerated examples decompose like the shipped ones; wrote $(TABLE_DIR)/eval.aitqa.json"

bench-table:
	$(PY) benchmarks/table_decompose.py
