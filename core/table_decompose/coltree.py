"""Column tree by span containment, with implicit colspans for blank-filled headers.

Part of the reconstruction of Cao et al. (ICML 2026, arXiv 2602.01969), Orthogonal Tree
Induction, column side; the rules are ours:

* Header slots over the data columns are owned by their merged cell. An empty, unmerged slot
  is an implicit **colspan** of its left neighbour when a label lies below it in the header
  (or when nothing lies above or below it and it is not in the last header row), provided no
  column boundary above separates the two columns; otherwise it is the vertical continuation
  of the cell above (the column's path ends higher up).
* A node's parent is the nearest header node above whose column span contains its span; a
  node above that only partly overlaps is skipped (with a warning), so every edge satisfies
  span containment.
* A data column's path is the chain of its deepest node. Corner cells (left of L) are
  row-dimension names, not path members. Header rows read as units are left out.
"""

from __future__ import annotations

from mlx26.core.table_decompose.grid import EMPTY_SLOT, Grid
from mlx26.core.table_decompose.regions import Layout
from mlx26.core.table_decompose.trees import Node, Tree


def column_tree(grid: Grid, layout: Layout, warnings: list[str]) -> tuple[Tree, dict[int, list[int]]]:
    """The column tree and, for every data column, the node ids of its path (root → leaf)."""
    rows = [r for r in layout.header_rows if r not in layout.unit_rows]
    L, n = layout.L, grid.n_cols
    cols = range(L, n)
    owner = grid.owner
    cells = grid.cells
    original = [[o if o != EMPTY_SLOT and cells[o].label else EMPTY_SLOT for o in owner[r]] for r in rows]
    explicit_empty = [[o != EMPTY_SLOT and not cells[o].label for o in owner[r]] for r in rows]
    fill = [row[:] for row in original]
    H = len(rows)
    for i in range(H):
        for c in cols:
            if fill[i][c] != EMPTY_SLOT or explicit_empty[i][c] or c == L:
                continue
            below = any(original[j][c] != EMPTY_SLOT for j in range(i + 1, H))
            above = any(fill[j][c] != EMPTY_SLOT for j in range(i))
            if not (below or (not above and i < H - 1)):
                continue
            left = fill[i][c - 1]
            if left == EMPTY_SLOT or cells[left].row > rows[i]:
                continue
            if any(fill[j][c - 1] != fill[j][c] for j in range(i)):
                continue  # a column boundary above: the implicit span may not cross it
            fill[i][c] = left
    # Nodes: every owner over the data columns, with the columns and header rows it covers.
    spans: dict[int, list[int]] = {}
    order: list[int] = []
    for i in range(H):
        for c in cols:
            o = fill[i][c]
            if o == EMPTY_SLOT:
                continue
            if o not in spans:
                spans[o] = [i, i, c, c]
                order.append(o)
            else:
                s = spans[o]
                s[1] = max(s[1], i)
                s[2] = min(s[2], c)
                s[3] = max(s[3], c)
    tree = Tree()
    for o in order:  # reading order: parents (above) come before children
        i0, i1, c0, c1 = spans[o]
        parent = None
        for j in range(i0 - 1, -1, -1):
            cand = fill[j][c0]
            if cand == EMPTY_SLOT or cand == o:
                continue
            p0, p1 = spans[cand][2], spans[cand][3]
            if p0 <= c0 and c1 <= p1:
                parent = cand
                break
            warnings.append(f"header cell {cells[o].a1()} only partly lies under {cells[cand].a1()}; "
                            "not attached there")
        cell = cells[o]
        tree.attach(Node(o, cell.label, cell.row, cell.col, (rows[i0], rows[i1]), (c0, c1)), parent)
    paths: dict[int, list[int]] = {}
    for c in cols:
        leaf = next((fill[i][c] for i in range(H - 1, -1, -1) if fill[i][c] != EMPTY_SLOT), EMPTY_SLOT)
        paths[c] = tree.chain(leaf) if leaf != EMPTY_SLOT else []
    return tree, paths


def unit_labels(grid: Grid, layout: Layout) -> dict[int, str]:
    """Per data column, the units annotation of header rows read as units (empty when none)."""
    out: dict[int, str] = {}
    for r in layout.unit_rows:
        for c in range(layout.L, grid.n_cols):
            label = grid.label_at(r, c)
            if label:
                out[c] = f"{out[c]} {label}" if c in out else label
    return out
