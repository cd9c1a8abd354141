"""Row tree: forward fill of multi-column row headers and an indent/section stack.

Part of the reconstruction of Cao et al. (ICML 2026, arXiv 2602.01969), Orthogonal Tree
Induction, row side; the rules are ours:

* Row-header columns 0..L-2: a blank slot with a label to its right (within the header
  columns) takes the label above it in its column (implicit rowspan); a new label resets the
  columns to its right and the stack. A merged cell is the same node in every row it covers.
* The last header column: a stack ordered by indentation. A row pops every entry indented as
  deep or deeper, then becomes a child of what remains. A **section row** (empty data area)
  followed by a row at the *same* indentation captures the rows below at that indentation
  until the next section row or a shallower row (StatCan style); without a cue (trailing
  colon, bold, ``<th>``, full-width span) that reading is an arbitration case
  (``section-scope``). A **total row** that deeper rows follow is their parent by the rule;
  the ``total-parent`` case may make them its siblings instead.
"""

from __future__ import annotations

from collections.abc import Callable

from mlx26.core.table_decompose.cells import TEXT, is_total_label
from mlx26.core.table_decompose.grid import EMPTY_SLOT, Grid, typed
from mlx26.core.table_decompose.regions import Layout
from mlx26.core.table_decompose.trees import Node, Tree

_EPS = 1e-6


def _data_empty(grid: Grid, r: int, L: int) -> bool:
    owner, cells = grid.owner[r], grid.cells
    return not any(owner[c] != EMPTY_SLOT and cells[owner[c]].label and cells[owner[c]].col >= L
                   for c in range(L, grid.n_cols))


def row_tree(grid: Grid, layout: Layout, decide: Callable[..., str], warnings: list[str]
             ) -> tuple[Tree, dict[int, list[int]]]:
    """The row tree and, for every body row, the node ids of its path (root → leaf)."""
    L = layout.L
    tree = Tree()
    paths: dict[int, list[int]] = {}
    body = layout.body_rows
    if L == 0:
        return tree, {r: [] for r in body}
    cells = grid.cells
    empty = {r: _data_empty(grid, r, L) for r in body}
    # Per row: the distinct labelled header cells of columns 0..L-1, by their anchor column.
    heads: dict[int, list[int]] = {}
    for r in body:
        seen: list[int] = []
        for c in range(L):
            o = grid.owner[r][c]
            if o != EMPTY_SLOT and cells[o].label and o not in seen:
                seen.append(o)
        heads[r] = seen
    last = L - 1
    blocks = _blocks(grid, layout)
    block: int | None = None
    current: list[int | None] = [None] * L
    stack: list[tuple[float, int, bool]] = []  # (indent, node id, captures same-indent rows)
    total_choice: dict[int, str] = {}
    for position, r in enumerate(body):
        if blocks.get(r) != block:  # a new row block: nothing above it carries over
            block = blocks.get(r)
            current = [None] * L
            stack.clear()
        ids = heads[r]
        by_col = {min(cells[o].col, last): o for o in ids}
        rightmost = max(by_col, default=-1)
        path: list[int] = [] if block is None else [block]
        for k in range(min(rightmost + 1, last)):
            o = by_col.get(k)
            if o is not None:
                if o != current[k]:
                    current[k] = o
                    for j in range(k + 1, L):
                        current[j] = None
                    stack.clear()
                path.append(o)
            else:
                filled = current[k]
                if filled is not None:
                    path.append(filled)  # forward fill (implicit rowspan)
        if rightmost < 0 and not empty[r] and position and paths.get(body[position - 1]) \
                and _text_beside(grid, r, L) and blocks.get(body[position - 1]) == block:
            # every row-header slot blank, a text label right beside them and data: the row continues
            # the one above (an implicit rowspan the reader did not see, e.g. with --header-cols too small)
            paths[r] = _attach(tree, grid, list(paths[body[position - 1]]), r, False, warnings)
            continue
        if rightmost < last:
            if ids:
                stack.clear()
        else:
            o = by_col[last]
            cell = cells[o]
            if stack and stack[-1][1] == o:  # the same merged cell, one row further down
                path += [x for _, x, _ in stack]
                paths[r] = _attach(tree, grid, path, r, empty[r], warnings)
                continue
            section = empty[r]
            d = cell.indent
            while stack:
                indent, top, captures = stack[-1]
                if indent < d - _EPS:
                    if cells[top].label and nodes_total(tree, top) and not section:
                        choice = total_choice.get(top)
                        if choice is None:
                            choice = decide(kind="total-parent", question=f"'{cells[top].label[:40]}' is a total "
                                            "row followed by deeper-indented rows. Are they its children?",
                                            context=_rows_excerpt(grid, body, position, L),
                                            options=[("parent", "the total row is their parent"),
                                                     ("sibling", "they are the total row's siblings")],
                                            default="parent", rows=(cells[top].row, r))
                            total_choice[top] = choice
                        if choice == "sibling":
                            stack.pop()
                            continue
                    break
                if abs(indent - d) <= _EPS and captures and not section:
                    if not _resumes_outer(grid, body, position, cells[top].row, last, d, heads):
                        break
                    choice = decide(kind="section-end", question=f"'{cell.label[:40]}' reads like the rows above "
                                    f"the section '{cells[top].label[:40]}', not like the rows inside it. Does the "
                                    "section end here?", context=_rows_excerpt(grid, body, position, L),
                                    options=[("end", "the section ends: this row is the section's sibling"),
                                             ("inside", "the row still belongs to the section")],
                                    default="end", rows=(r, r))
                    if choice == "inside":
                        break
                stack.pop()
            captures = False
            if section:
                nxt = _next_label(grid, body, position, last, heads)
                if nxt is not None and abs(cells[nxt].indent - d) <= _EPS and not empty[cells[nxt].row]:
                    captures = True
                    if not _section_cue(grid, cell, r, L):
                        choice = decide(kind="section-scope", question=f"'{cell.label[:40]}' has no data and the "
                                        "next rows have the same indentation. Does it head them?",
                                        context=_rows_excerpt(grid, body, position, L),
                                        options=[("nest", "the following rows at this indentation are its children"),
                                                 ("flat", "it is a sibling of the following rows")],
                                        default="nest", rows=(r, r))
                        captures = choice == "nest"
            stack.append((d, o, captures))
            path += [x for _, x, _ in stack]
        paths[r] = _attach(tree, grid, path, r, empty[r], warnings)
    return tree, paths


def _lead(label: str) -> str:
    word = label.split(" ", 1)[0].lower().strip(",:;()")
    return word if len(word) >= 4 and word.isalpha() else ""


def _resumes_outer(grid: Grid, body: list[int], position: int, section_row: int, last: int, indent: float,
                   heads: dict[int, list[int]]) -> bool:
    """Repetition cue: the row's leading word recurs among the section's preceding siblings, not inside it.

    ("Percentage overweight", "Percentage obese", [section "Highest level of education": …],
    "Percentage immigrant": the last row resumes the list the section interrupted.)
    """

    def label(r: int) -> tuple[str, float] | None:
        ids = [o for o in heads.get(r, []) if grid.cells[o].col >= last or grid.cells[o].last_col >= last]
        return (grid.cells[ids[0]].label, grid.cells[ids[0]].indent) if ids else None

    me = label(body[position])
    if me is None or not _lead(me[0]):
        return False
    start = body.index(section_row) if section_row in body else position
    inside = {_lead(x[0]) for r in body[start + 1:position] if (x := label(r)) is not None}
    before = set()
    for r in reversed(body[:start]):
        x = label(r)
        if x is None:
            continue
        if abs(x[1] - indent) > _EPS or _data_empty(grid, r, last + 1):
            break
        before.add(_lead(x[0]))
    return _lead(me[0]) in before and _lead(me[0]) not in inside


def _blocks(grid: Grid, layout: Layout) -> dict[int, int]:
    """Per body row, the cell of the row-block label above it (see ``regions._block_rows``)."""
    if not layout.block_rows:
        return {}
    out: dict[int, int] = {}
    marks = sorted(layout.block_rows)
    for r in layout.body_rows:
        above = [m for m in marks if m < r]
        if above:
            m = above[-1]
            o = next((grid.owner[m][c] for c in range(layout.L, grid.n_cols) if grid.label_at(m, c)), EMPTY_SLOT)
            if o != EMPTY_SLOT:
                out[r] = o
    return out


def _text_beside(grid: Grid, r: int, L: int) -> bool:
    cell = grid.cell_at(r, L)
    return bool(cell and cell.label and cell.row == r and cell.col == L and typed(cell).kind == TEXT)


def nodes_total(tree: Tree, node_id: int) -> bool:
    node = tree.nodes.get(node_id)
    return bool(node and node.total)


def _attach(tree: Tree, grid: Grid, path: list[int], r: int, section: bool, warnings: list[str]) -> list[int]:
    """Add the path's new nodes to the tree (first parent wins) and return the path."""
    parent: int | None = None
    for o in path:
        node = tree.nodes.get(o)
        if node is None:
            cell = grid.cells[o]
            node = Node(o, cell.label, cell.row, cell.col, (cell.row, cell.last_row), (cell.col, cell.last_col),
                        total=is_total_label(cell.label), section=section and o == path[-1], indent=cell.indent)
            tree.attach(node, parent)
        elif node.parent != parent:
            message = f"row header {grid.cells[o].a1()} falls under two parents; the first is kept"
            if message not in warnings:
                warnings.append(message)
        node.rows = (min(node.rows[0], r), max(node.rows[1], r))
        parent = o
    return tree.chain(path[-1]) if path else []


def _next_label(grid: Grid, body: list[int], position: int, last: int, heads: dict[int, list[int]]) -> int | None:
    for r in body[position + 1:]:
        for o in heads[r]:
            if grid.cells[o].col >= last or grid.cells[o].last_col >= last:
                return o
        if heads[r]:
            return None  # a label in an outer column comes first
    return None


def _section_cue(grid: Grid, cell, r: int, L: int) -> bool:
    return cell.label.rstrip().endswith(":") or cell.bold or cell.header or cell.last_col >= grid.n_cols - 1 > L - 1


def _rows_excerpt(grid: Grid, body: list[int], position: int, L: int) -> str:
    lines = []
    for r in body[max(position - 1, 0):position + 3]:
        label = " | ".join(grid.label_at(r, c)[:30] for c in range(L))
        cell = grid.cell_at(r, L - 1)
        indent = f" (indent {cell.indent:g})" if cell is not None else ""
        data = "no data" if _data_empty(grid, r, L) else "data"
        lines.append(f"row {r}: {label}{indent} [{data}]")
    return "\n".join(lines)
