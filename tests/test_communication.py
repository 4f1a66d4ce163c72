import numpy as np
import pytest

from fedclust.communication import SERVER, Communication


def test_star_summaries_per_kind_and_per_edge():
    comm = Communication()
    devices = np.array([0, 1, 2])
    comm.send("centers", SERVER, devices, floats=10, times=3)      # 3 rounds of broadcasts
    comm.send("sums", devices, SERVER, floats=10, times=3)
    comm.send("counts", devices, SERVER, ints=2, times=3)
    comm.add_rounds(3)
    assert comm["rounds"] == 3
    assert comm["floats_down"] == 3 * 3 * 10 and comm["messages_down"] == 9
    assert comm["floats_up"] == 90 and comm["ints_up"] == 18 and comm["messages_up"] == 18
    assert comm["bytes_up"] == 8 * 90 + 8 * 18 and comm.bytes == comm["bytes_up"] + 720
    kinds = comm.by_kind().set_index("kind")
    assert kinds.loc["counts", "ints"] == 18 and kinds.loc["counts", "direction"] == "up"
    assert kinds.loc["centers", "direction"] == "down"
    edges = comm.by_edge()
    one = edges[(edges.kind == "sums") & (edges.sender == 1)]
    assert len(one) == 1 and one.floats.iloc[0] == 30 and one.messages.iloc[0] == 3
    assert set(edges[edges.kind == "centers"].receiver) == {0, 1, 2}


def test_graph_messages_are_sent_by_devices():
    comm = Communication(float_bytes=4)
    comm.send("coreset", [0, 1, 1], [1, 0, 2], floats=[5, 6, 7])
    assert comm["floats_up"] == 18 and comm["floats_down"] == 0
    assert comm["bytes_up"] == 4 * 18
    edges = comm.by_edge().set_index(["sender", "receiver"])
    assert edges.loc[(1, 2), "floats"] == 7


def test_notes_extend_and_repeated_records_merge():
    a = Communication()
    a.send("x", 0, SERVER, floats=1)
    a.note("seeding_rounds", 4)
    b = Communication()
    b.send("x", 0, SERVER, floats=2)
    b.send("y", SERVER, 0, ints=1)
    b.add_rounds(2)
    a.extend(b)
    assert a["floats_up"] == 3 and a["ints_down"] == 1 and a["rounds"] == 2
    assert a["seeding_rounds"] == 4 and dict(a)["seeding_rounds"] == 4
    edges = a.by_edge()
    assert len(edges[edges.kind == "x"]) == 1 and edges[edges.kind == "x"].floats.iloc[0] == 3
    with pytest.raises(KeyError, match="counter"):
        a.note("rounds", 1)


def test_compaction_keeps_every_count(monkeypatch):
    import fedclust.communication as module
    monkeypatch.setattr(module, "_COMPACT_ROWS", 5)
    comm = Communication()
    for _ in range(7):
        comm.send("m", np.arange(4), SERVER, floats=1)
    edges = comm.by_edge()
    assert len(edges) == 4 and (edges.messages == 7).all() and edges.floats.sum() == 28


def test_negative_sizes_are_refused():
    with pytest.raises(ValueError, match="non-negative"):
        Communication().send("m", 0, SERVER, floats=-1)


def test_total_of_one_kind():
    comm = Communication()
    comm.send("a", [0, 1], SERVER, floats=3)
    comm.send("b", 0, SERVER, ints=2)
    assert comm.total("a") == 6 and comm.total("b", "ints") == 2 and comm.total("c") == 0
    assert comm.total("a", "bytes") == 48
    with pytest.raises(ValueError, match="unit must be"):
        comm.total("a", "words")


@pytest.mark.parametrize("far", [50, 2**40])  # integer keys, and the row sort for huge ids
def test_per_edge_totals_merge_repeated_edges(far):
    from fedclust.communication import SERVER, Communication

    comm = Communication()
    comm.send("a", [3, far, 3], SERVER, floats=[1, 2, 4])
    comm.send("b", SERVER, [far, 3], ints=5)
    comm.send("a", 3, SERVER, floats=8)
    edges = comm.by_edge().sort_values(["kind", "sender", "receiver"]).reset_index(drop=True)
    assert edges[["kind", "sender", "receiver", "messages", "floats", "ints"]].values.tolist() \
        == [["a", 3, SERVER, 3, 13, 0], ["a", far, SERVER, 1, 2, 0],
            ["b", SERVER, 3, 1, 0, 5], ["b", SERVER, far, 1, 0, 5]]


def test_one_record_with_both_directions_splits_its_totals():
    # an edge list with the server among the senders, sizes per row, and a scalar times
    comm = Communication(float_bytes=4)
    comm.send("mixed", [SERVER, 0, SERVER, 2], [0, SERVER, 1, 1], floats=[3, 5, 7, 11], ints=1,
              times=2)
    assert (comm["floats_down"], comm["floats_up"]) == (2 * (3 + 7), 2 * (5 + 11))
    assert (comm["ints_down"], comm["ints_up"]) == (4, 4)
    assert (comm["messages_down"], comm["messages_up"]) == (4, 4)
    assert comm["bytes_down"] == 4 * 20 + 8 * 4 and comm["bytes_up"] == 4 * 32 + 8 * 4
    # a column of senders against a row of receivers: every pair a message
    grid = Communication()
    grid.send("pairs", np.array([[0], [1]]), np.array([SERVER, 5, 6]), floats=1)
    edges = grid.by_edge()
    assert len(edges) == 6 and grid["floats_up"] == 6 and grid["floats_down"] == 0
