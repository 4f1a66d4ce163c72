"""What a profile would take on N cores, planned before running it again after a change to the
job graph: a dry run's jobs (``snakemake -n``'s printout, :func:`parse_dry_run`), each with its
time measured in a finished run (Snakemake's ``benchmark:`` files, :func:`job_seconds`: an
upper and a lower estimate), laid out by a list schedule (:func:`list_schedule`). The estimate
is a plan, not a measurement: ``benchmarks/profiles.py`` measures.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx
import pandas as pd

__all__ = ["PlannedJob", "parse_dry_run", "job_seconds", "job_graph", "list_schedule"]

_RULE = re.compile(r"^(?:local)?rule (\w+):\s*$")


@dataclass
class PlannedJob:
    """One job of a dry run: its rule, files, benchmark file and threads."""

    rule: str
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    benchmark: str | None = None
    threads: int = 1


def parse_dry_run(text: str) -> list[PlannedJob]:
    """Every job of ``snakemake -n``'s printout (its ``rule NAME:`` blocks), in its order."""
    jobs: list[PlannedJob] = []
    for line in text.splitlines():
        rule = _RULE.match(line)
        if rule:
            jobs.append(PlannedJob(rule.group(1)))
            continue
        if not jobs or not line.startswith("    "):
            continue
        key, _, value = line.strip().partition(": ")
        if key in ("input", "output"):
            files = [part.strip() for part in value.split(",") if part.strip()]
            setattr(jobs[-1], f"{key}s", files)
        elif key == "benchmark":
            jobs[-1].benchmark = value.strip()
        elif key == "threads":
            jobs[-1].threads = int(value)
    return jobs


def job_seconds(job: PlannedJob, run_dir, *, basis: str = "wall",
                measured_threads: dict | None = None, default: float = 0.0) -> float:
    """The measured time of ``job`` in the finished run ``run_dir`` (its benchmark file).

    ``basis="wall"``: its wall seconds, or its CPU seconds where the rule ran on more threads
    then (``measured_threads``: rule -> threads of the measured run) than it asks for now; an
    upper estimate where other work ran beside the measured run. ``basis="cpu"``: its CPU
    seconds over the threads it asks for now; a lower estimate (Snakemake samples the CPU time
    every few seconds, so a short job's last seconds are missed). ``default`` where the run
    has no such file (a job the measured run did not have)."""
    if basis not in ("wall", "cpu"):
        raise ValueError(f"basis must be 'wall' or 'cpu', got {basis!r}")
    if job.benchmark is None or not (Path(run_dir) / job.benchmark).exists():
        return default
    row = pd.read_csv(Path(run_dir) / job.benchmark, sep="\t").iloc[0]
    if basis == "cpu":
        return float(row["cpu_time"]) / job.threads
    then = (measured_threads or {}).get(job.rule, job.threads)
    return float(row["cpu_time"] if then > job.threads else row["s"])


def job_graph(jobs: list[PlannedJob]) -> nx.DiGraph:
    """Job ``i`` -> job ``j`` where ``j`` reads a file ``i`` writes."""
    producer = {path: i for i, job in enumerate(jobs) for path in job.outputs}
    graph = nx.DiGraph()
    graph.add_nodes_from(range(len(jobs)))
    graph.add_edges_from((producer[path], j) for j, job in enumerate(jobs)
                         for path in job.inputs if path in producer)
    return graph


def list_schedule(jobs: list[PlannedJob], seconds, cores: int, *,
                  order: str = "longest_path") -> float:
    """Wall seconds of running ``jobs`` (taking ``seconds[i]`` each, on ``min(threads,
    cores)`` cores) on ``cores`` cores: whenever a job ends, start the ready jobs that fit, by
    ``order`` (``"longest_path"``: the most work still behind a job first; ``"dry_run"``: the
    printout's order, closer to what Snakemake's own scheduler does when every job has the
    same priority)."""
    if cores < 1:
        raise ValueError(f"cores must be at least 1, got {cores}")
    if order not in ("longest_path", "dry_run"):
        raise ValueError(f"order must be 'longest_path' or 'dry_run', got {order!r}")
    graph = job_graph(jobs)
    behind: dict[int, float] = {}
    for node in reversed(list(nx.topological_sort(graph))):
        behind[node] = seconds[node] + max((behind[c] for c in graph.successors(node)),
                                           default=0.0)
    rank = (lambda i: (-behind[i], i)) if order == "longest_path" else (lambda i: i)
    waiting = {i: graph.in_degree(i) for i in graph}
    ready = sorted((i for i, n in waiting.items() if n == 0), key=rank)
    running: list[tuple[float, int]] = []
    now, free = 0.0, cores
    while ready or running:
        for i in list(ready):
            need = min(jobs[i].threads, cores)
            if need <= free:
                free -= need
                ready.remove(i)
                heapq.heappush(running, (now + seconds[i], i))
        now, done = heapq.heappop(running)
        free += min(jobs[done].threads, cores)
        for child in graph.successors(done):
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.append(child)
        ready.sort(key=rank)
    return now
