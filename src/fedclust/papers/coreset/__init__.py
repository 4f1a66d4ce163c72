"""What only distributed coresets on general topologies (Balcan, Ehrlich & Liang, NeurIPS 2013)
uses: its declarations, experiments, figures, claims, captions and rules, and the names they
share (below)."""

__all__ = ["GRAPHS", "GRAPH_TITLES"]

#: Distributed coresets: the paper's three communication graphs (Sec. 5), as config and file
#: names.
GRAPHS = ("erdos_renyi", "grid", "preferential_attachment")
#: Distributed coresets: how figures and legends name those graphs (and the star).
GRAPH_TITLES = {"erdos_renyi": "Erdős–Rényi", "grid": "grid",
                "preferential_attachment": "preferential attachment", "star": "star"}
