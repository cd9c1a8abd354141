"""Orthogonal Hierarchical Decomposition of complex tables (``mlx26 table-decompose``).

Reconstruction of Cao et al., "Orthogonal Hierarchical Decomposition for Structure-Aware
Table Understanding with LLMs" (ICML 2026, arXiv 2602.01969). No code is public and only the
abstract is available: Orthogonal Tree Induction (a column tree and a row tree) and the
dual-pathway lineage of every data cell are the paper's ideas; the readers (``read_html``,
``read_xlsx``, ``read_text``, ``hitab``), the cell typing (``cells``), the region rules
(``regions``), the tree inducers (``coltree``, ``rowtree``), the lineage and its renderings
(``lineage``), the arbitration protocol (``arbiter``), the renderer (``render``) and the
evaluation (``evaluate``, ``retrieval``) are ours. See docs/table-decompose.md.
"""

from mlx26.core.common.lazy import lazy_exports

# {submodule: the names it exports}: each is imported on first use, so importing the package
# (and its stdlib-only .spec, which the CLI reads for --help) loads nothing heavy.
__all__ = lazy_exports(__name__, {
    "arbiter": ("Arbiter", "ArbiterCache", "Case", "LLMArbiter", "build_messages", "parse_choice"),
    "cells": ("Typed", "parse_cell"),
    "decompose": ("Decomposition", "decompose", "decompose_bytes"),
    "grid": ("Cell", "Grid", "build_grid"),
    "load": ("detect_format", "load_grid"),
    "render": ("LogicalTable", "layout"),
    "spec": ("FORMATS",),
})
