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

from mlx26.core.table_decompose.arbiter import (
    Arbiter,
    ArbiterCache,
    Case,
    LLMArbiter,
    build_messages,
    parse_choice,
)
from mlx26.core.table_decompose.cells import Typed, parse_cell
from mlx26.core.table_decompose.decompose import Decomposition, decompose, decompose_bytes
from mlx26.core.table_decompose.grid import Cell, Grid, build_grid
from mlx26.core.table_decompose.load import FORMATS, detect_format, load_grid
from mlx26.core.table_decompose.render import LogicalTable, layout

__all__ = [
    "FORMATS", "Arbiter", "ArbiterCache", "Case", "Cell", "Decomposition", "Grid", "LLMArbiter", "LogicalTable",
    "Typed", "build_grid", "build_messages", "decompose", "decompose_bytes", "detect_format", "layout", "load_grid", "parse_cell",
    "parse_choice",
]
