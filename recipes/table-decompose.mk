# table-decompose recipe.  Run:  make smoke-table-decompose | make demo-table-decompose | make reproduce-table-decompose | make bench-table-decompose
# (or standalone: make -f recipes/table-decompose.mk smoke-table-decompose MLX26=mlx26)
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
TABLE_DIR := $(OUT)/table-decompose
# AITQA (IBM AIT-QA, CDLA-Sharing-1.0) is not in the repository: the folder holding
# aitqa_tables.jsonl and aitqa_questions.jsonl, by default ../shared/data/aitqa beside it.
AITQA ?= ../shared/data/aitqa
# Without that folder the AITQA steps are skipped with a note, or fail when CI is set.
HAVE_AITQA = if [ -f $(AITQA)/aitqa_tables.jsonl ]; then :; elif [ -n "$${CI:-}" ]; then \
	  echo "table-decompose: no AITQA at $(AITQA) (set AITQA=DIR)" >&2; exit 1; else \
	  echo "table-decompose: no AITQA at $(AITQA): its step in $@ skipped (set AITQA=DIR)"; exit 0; fi
EXAMPLE_TABLES := orchard library transit
# The 50 real StatCan tables from HiTab (C-UDA), read in place; mlx26's own gold annotates them.
STATCAN ?= ../shared/data/hitab-statcan
STATCAN_GOLD := tests/table_decompose/statcan_gold
HAVE_STATCAN = if [ -f $(STATCAN)/statcan_1.xlsx ]; then :; elif [ -n "$${CI:-}" ]; then \
	  echo "table-decompose: no StatCan tables at $(STATCAN) (set STATCAN=DIR)" >&2; exit 1; else \
	  echo "table-decompose: no StatCan tables at $(STATCAN): its step in $@ skipped (set STATCAN=DIR)"; exit 0; fi

.PHONY: smoke-table-decompose demo-table-decompose reproduce-table-decompose bench-table bench-table-decompose
SMOKES += smoke-table-decompose
DEMOS += demo-table-decompose
BENCHES += bench-table-decompose

# The decomposition is deterministic: SEED is unused (kept for the recipe convention).
$(TABLE_DIR)/statcan.lines.txt:
	mkdir -p $(@D)
	$(MLX26) table-decompose --example statcan --quiet -o $@ --force

$(TABLE_DIR)/orchard.%.lines.txt:
	mkdir -p $(@D)
	$(MLX26) table-decompose --example orchard-$* --quiet -o $@ --force

# The issue's example line comes out first; the made-up orchard table read as XLSX, HTML and
# blank-filled CSV gives the same lines, starting with its three-level row path; three AITQA
# tables are recovered exactly from both renderings (when $(AITQA) is there).
smoke-table-decompose: $(TABLE_DIR)/statcan.lines.txt $(TABLE_DIR)/orchard.xlsx.lines.txt \
		$(TABLE_DIR)/orchard.html.lines.txt $(TABLE_DIR)/orchard.csv.lines.txt
	test "$$(head -1 $<)" = "Aged 2 to 8 years > Food alone > 2004 | Total > Mean grams = 53"
	test "$$(head -1 $(TABLE_DIR)/orchard.xlsx.lines.txt)" = \
		"North valley > Apples > Early varieties | Tonnes harvested > 2023 = 1,240"
	cmp $(TABLE_DIR)/orchard.xlsx.lines.txt $(TABLE_DIR)/orchard.html.lines.txt
	cmp $(TABLE_DIR)/orchard.xlsx.lines.txt $(TABLE_DIR)/orchard.csv.lines.txt
	@$(HAVE_AITQA); \
	  $(MLX26) table-decompose eval --aitqa $(AITQA) --table tab-5 --table tab-6 --table tab-67 --render xlsx \
	    --render csv -o $(TABLE_DIR)/eval.small.json --force; \
	  test "$$(grep -c '"both_paths_em": 1.0' $(TABLE_DIR)/eval.small.json)" = 2; \
	  echo "smoke-table-decompose: AITQA tab-5, tab-6, tab-67 recovered exactly from XLSX and CSV"
	@$(HAVE_STATCAN); \
	  $(MLX26) table-decompose $(STATCAN)/statcan_9.xlsx --quiet | head -1 | \
	    grep -qx 'Newfoundland and Labrador | Farm operators > Immigrated between 2011 and 2016 > China = 0.0'; \
	  $(MLX26) table-decompose eval --gold-format mlx26 --gold $(STATCAN_GOLD) --tables $(STATCAN) --source html \
	    --split tune -o $(TABLE_DIR)/eval.statcan.json --force; \
	  grep -q '"both_paths_em": 1.0' $(TABLE_DIR)/eval.statcan.json; \
	  echo "smoke-table-decompose: real StatCan table 9 (units row, labelled corner) and the tuned gold tables"
	@echo "smoke-table-decompose: StatCan line as in the issue; XLSX = HTML = CSV lineage"

demo-table-decompose:
	$(MLX26) table-decompose --example statcan --quiet | head -8
	@$(HAVE_STATCAN); echo "# a real StatCan table (statcan_3.xlsx, HiTab, C-UDA):"; \
	  $(MLX26) table-decompose $(STATCAN)/statcan_3.xlsx --quiet | head -8
	$(MLX26) table-decompose --example orchard-xlsx --emit markdown --quiet | head -10
	$(MLX26) table-decompose --example transit-csv --emit trees --quiet | head -30

# Regenerate the shipped example renderings, check they decompose exactly like the shipped files,
# and score the whole AITQA set (from $(AITQA)) in every rendering.
$(TABLE_DIR)/examples/.done:
	mkdir -p $(@D)
	$(PY) -c 'import sys; from mlx26.core.table_decompose.examples import make_examples; make_examples(sys.argv[1])' $(@D)
	touch $@

$(TABLE_DIR)/eval.aitqa.json:
	mkdir -p $(@D)
	$(MLX26) table-decompose eval --aitqa $(AITQA) --render xlsx --render csv --render html --render csv-indent \
		--render md --per-table -o $@ --force

reproduce-table-decompose: $(TABLE_DIR)/examples/.done $(TABLE_DIR)/eval.aitqa.json
	for name in $(EXAMPLE_TABLES); do \
	  for kind in .html .xlsx _blank.csv; do \
	    cmp <($(MLX26) table-decompose $(TABLE_DIR)/examples/$$name$$kind --emit lineage --format jsonl --quiet) \
	        <($(MLX26) table-decompose core/table_decompose/data/examples/$$name$$kind --emit lineage --format jsonl --quiet); \
	  done; \
	done
	@echo "reproduce-table-decompose: regenerated examples decompose like the shipped ones; wrote $(TABLE_DIR)/eval.aitqa.json"

bench-table:
	@$(HAVE_AITQA); $(PY) benchmarks/table_decompose.py --aitqa $(AITQA)

# AITQA (rendered by us) and the real StatCan tables, each side by side with pandas.read_html.
bench-table-decompose: bench-table
	@$(HAVE_STATCAN); $(PY) benchmarks/table_decompose_statcan.py --tables $(STATCAN) --gold $(STATCAN_GOLD)
