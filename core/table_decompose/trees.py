"""Header trees shared by the column and row tree inducers: nodes, paths and serialisation.

Part of the reconstruction of Cao et al. (ICML 2026, arXiv 2602.01969), Orthogonal Tree
Induction: a column tree and a row tree whose nodes are header cells. A node is identified by
its anchor cell; ``rows``/``cols`` are the grid span it governs (for blank-filled input the
implicit span inferred by the inducer, for merged input the merge).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Node:
    """A header cell in a tree: label, anchor, governed span, parent and children (node ids)."""

    id: int
    label: str
    row: int
    col: int
    rows: tuple[int, int]
    cols: tuple[int, int]
    parent: int | None = None
    children: list[int] = field(default_factory=list)
    total: bool = False
    section: bool = False
    indent: float = 0.0


@dataclass
class Tree:
    """Nodes by id and the root ids in reading order."""

    nodes: dict[int, Node] = field(default_factory=dict)
    roots: list[int] = field(default_factory=list)

    def attach(self, node: Node, parent: int | None) -> None:
        node.parent = parent
        self.nodes[node.id] = node
        if parent is None:
            self.roots.append(node.id)
        else:
            self.nodes[parent].children.append(node.id)

    def chain(self, node_id: int) -> list[int]:
        """Root → node ids."""
        out = []
        current: int | None = node_id
        while current is not None:
            out.append(current)
            current = self.nodes[current].parent
        return out[::-1]

    def edges(self) -> list[tuple[int | None, int]]:
        return [(n.parent, n.id) for n in self.nodes.values()]

    def to_json(self, *, row_tree: bool) -> list[dict[str, Any]]:
        def dump(node_id: int) -> dict[str, Any]:
            n = self.nodes[node_id]
            out: dict[str, Any] = {"label": n.label, "cell": [n.row, n.col], "rows": list(n.rows), "cols": list(n.cols)}
            if row_tree:
                out.update(total=n.total, section=n.section, indent=n.indent)
            out["children"] = [dump(c) for c in n.children]
            return out

        return [dump(r) for r in self.roots]

    def to_hitab(self, shift: int) -> dict[str, Any]:
        def dump(node_id: int) -> dict[str, Any]:
            n = self.nodes[node_id]
            return {"row_index": n.row - shift, "column_index": n.col, "children": [dump(c) for c in n.children]}

        return {"row_index": -1, "column_index": -1, "children": [dump(r) for r in self.roots]}
