"""What a Flower run measured beside the in-process fit: centres, cost, bytes by what
counts them, as one tidy table (:func:`measurements`) and its Markdown summary.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...vocabulary import algorithm_rank
from .launcher import FlowerRun
from .protocol import ALGORITHMS, CONTROL_EXCHANGES, CONTROL_RECORDS, LEDGER_RECORDS


def fit_in_process(algorithm: str, params: dict, X, devices, *, sample_weight=None):
    """The estimator the Flower app runs, fitted in this process with the same parameters
    (the same ``random_state``): the reference the run is compared with."""
    return ALGORITHMS[algorithm](**params).fit(X, devices=devices, sample_weight=sample_weight)


def measurements(run: FlowerRun, fitted, *, algorithm: str) -> pd.DataFrame:
    """One tidy table of a run (one row per measurement): ``algorithm, n_nodes,
    lost_devices, scope, key, metric, value``; ``scope`` is ``run`` (``key`` empty),
    ``device`` (``key`` the device id) or ``exchange`` (``key`` the exchange and round).

    Run metrics: ``centers_max_abs_diff`` against ``fitted`` (the in-process fit),
    ``cost_flower`` (the devices' k-means cost of their rows, summed), ``cost_in_process``
    (``inertia_``), ``cost_rel_diff``; the ledger's columns (``ledger_<column>``,
    :meth:`fedclust.communication.Communication.ledger`); Flower's payload, as its
    ``message_size_mod`` counts it, split by record: ``payload_ledger_bytes`` (the records
    of the ledger's message kinds, with ``_up``/``_down``), ``payload_draws_bytes`` (k-FED's
    shipped random draws), ``payload_config_bytes`` (the step names), ``payload_bytes`` (all
    three: what the algorithm sent), ``control_bytes`` (device sizes, final centres and
    costs: what the simulator knows without a message), ``payload_messages`` and
    ``payload_bytes_per_message``; the ratios ``payload_ledger_over_ledger`` (the
    serialization's overhead on the ledger's records) and ``payload_over_ledger``; the wire
    (a counting relay between each SuperNode and the SuperLink: every byte of its TCP
    streams, HTTP framing, polling and heartbeats included): ``wire_bytes`` (``_up``,
    ``_down``), ``wire_connections`` and ``wire_over_payload`` (over payload and control
    bytes); ``wall_s`` (launch to stop), ``server_wall_s``, ``exchanges`` (the algorithm's
    message exchanges) and ``wall_s_per_round`` (their wall time over the ledger's rounds),
    ``devices_lost``.
    """
    result = run.result
    messages = pd.DataFrame(result["messages"], columns=["exchange", "round", "device",
                                                         "direction", "record", "bytes"])
    lost = ";".join(str(d) for d in result["lost_devices"])
    n_nodes = len(run.wire)
    rows = []

    def add(metric, value, scope="run", key=""):
        rows.append({"algorithm": algorithm, "n_nodes": n_nodes, "lost_devices": lost,
                     "scope": scope, "key": str(key), "metric": metric,
                     "value": float(value)})

    centers = np.asarray(result["centers"])
    add("centers_max_abs_diff", np.abs(centers - fitted.cluster_centers_).max())
    add("cost_flower", result["cost"])
    add("cost_in_process", fitted.inertia_)
    add("cost_rel_diff", abs(result["cost"] - fitted.inertia_) / max(fitted.inertia_, 1e-300))
    ledger = fitted.communication_.ledger()
    for column, value in ledger.items():
        add(f"ledger_{column}", value)
    kind = np.select([messages["record"].isin(LEDGER_RECORDS), messages["record"] == "draws",
                      messages["record"] == "config", messages["record"].isin(CONTROL_RECORDS)],
                     ["ledger", "draws", "config", "control"], "other")
    messages = messages.assign(kind=kind)
    by_kind = messages.groupby("kind")["bytes"].sum()
    for direction in ("up", "down"):
        add(f"payload_ledger_bytes_{direction}", messages.loc[
            (messages["kind"] == "ledger") & (messages["direction"] == direction), "bytes"].sum())
    payload = sum(by_kind.get(k, 0) for k in ("ledger", "draws", "config", "other"))
    add("payload_ledger_bytes", by_kind.get("ledger", 0))
    add("payload_draws_bytes", by_kind.get("draws", 0))
    add("payload_config_bytes", by_kind.get("config", 0))
    add("payload_bytes", payload)
    add("control_bytes", by_kind.get("control", 0))
    algorithmic = messages[messages["kind"] != "control"]
    n_messages = len(algorithmic.groupby(["exchange", "round", "device", "direction"]))
    add("payload_messages", n_messages)
    add("payload_bytes_per_message", payload / max(n_messages, 1))
    if ledger["bytes"] > 0:
        add("payload_ledger_over_ledger", by_kind.get("ledger", 0) / ledger["bytes"])
        add("payload_over_ledger", payload / ledger["bytes"])
    wire_up = sum(w["bytes_up"] for w in run.wire)
    wire_down = sum(w["bytes_down"] for w in run.wire)
    add("wire_bytes", wire_up + wire_down)
    add("wire_bytes_up", wire_up)
    add("wire_bytes_down", wire_down)
    add("wire_connections", sum(w["connections"] for w in run.wire))
    add("wire_over_payload", (wire_up + wire_down) / max(payload + by_kind.get("control", 0), 1))
    for wire in run.wire:
        add("wire_bytes_up", wire["bytes_up"], "device", wire["device"])
        add("wire_bytes_down", wire["bytes_down"], "device", wire["device"])
        add("wire_connections", wire["connections"], "device", wire["device"])
    algorithmic = [e for e in result["exchanges"] if e["exchange"] not in CONTROL_EXCHANGES]
    add("wall_s", run.wall_s)
    add("server_wall_s", result["wall_s"])
    add("exchanges", len(algorithmic))
    # a round as the ledger counts them (k-FED's one round is two exchanges: up, then down)
    add("wall_s_per_round", sum(e["wall_s"] for e in algorithmic) / max(ledger["rounds"], 1))
    for exchange in result["exchanges"]:
        add("wall_s", exchange["wall_s"], "exchange",
            f"{exchange['exchange']}-{exchange['round']}")
    add("devices_lost", len(result["lost_devices"]))
    return pd.DataFrame(rows)


#: The rows of :func:`summary_markdown`: label, metric of :func:`measurements`, format.
SUMMARY_ROWS = (
    ("centres: max abs diff vs in-process", "centers_max_abs_diff", "{:.1e}"),
    ("cost: relative diff vs in-process", "cost_rel_diff", "{:.1e}"),
    ("ledger rounds", "ledger_rounds", "{:,.0f}"),
    ("ledger bytes", "ledger_bytes", "{:,.0f}"),
    ("payload: ledger's records", "payload_ledger_bytes", "{:,.0f}"),
    ("  \u2026 over ledger", "payload_ledger_over_ledger", "{:.2f}"),
    ("payload: all the algorithm sends", "payload_bytes", "{:,.0f}"),
    ("  of which k-FED's draws", "payload_draws_bytes", "{:,.0f}"),
    ("payload bytes per message", "payload_bytes_per_message", "{:,.0f}"),
    ("control (sizes, final centres, costs)", "control_bytes", "{:,.0f}"),
    ("wire bytes (all SuperNodes' TCP streams)", "wire_bytes", "{:,.0f}"),
    ("  \u2026 over payload + control", "wire_over_payload", "{:.0f}"),
    ("wall s per ledger round", "wall_s_per_round", "{:.1f}"),
    ("wall s, launch to stop", "wall_s", "{:.0f}"),
    ("devices lost", "devices_lost", "{:.0f}"),
)


def summary_markdown(table: pd.DataFrame) -> str:
    """The run-level rows of :func:`measurements` tables (one or several runs) as one Markdown
    table, a column per run (``algorithm, N=n`` and the killed devices), the rows of
    :data:`SUMMARY_ROWS`: what the README shows, rendered from the CSV rather than typed."""
    runs = table[table["scope"] == "run"].copy()
    runs["lost_devices"] = runs["lost_devices"].fillna("").astype(str)
    # the vocabulary's order of algorithms (as the figure), each run without losses first
    order = runs[["algorithm", "n_nodes", "lost_devices"]].drop_duplicates()
    order = order.assign(killed=order["lost_devices"] != "").sort_values(
        ["algorithm", "n_nodes", "killed", "lost_devices"], kind="stable").sort_values(
        "algorithm", key=algorithm_rank, kind="stable").drop(columns="killed")
    wide = runs.pivot_table(index=["algorithm", "n_nodes", "lost_devices"], columns="metric",
                            values="value", aggfunc="first")
    heads, columns = [], []
    for algorithm, n_nodes, lost in order.itertuples(index=False):
        lost_text = f", {lost.replace(';', ', ')} killed" if lost else ""
        heads.append(f"{algorithm}, N={int(n_nodes)}{lost_text}")
        columns.append(wide.loc[(algorithm, n_nodes, lost)])
    lines = ["| | " + " | ".join(heads) + " |", "|---|" + "---:|" * len(heads)]
    for label, metric, fmt in SUMMARY_ROWS:
        cells = [fmt.format(col[metric]) if metric in col and pd.notna(col[metric]) else "\u2013"
                 for col in columns]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


