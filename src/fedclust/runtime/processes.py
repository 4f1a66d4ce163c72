"""Processes and loopback sockets for a runtime on one machine: free ports, process groups
stopped on success and on failure, and a byte-counting TCP relay.

No Flower import here: the launcher (:func:`fedclust.runtime.flower.launch`) uses these to
start a SuperLink and SuperNodes and to count the bytes each SuperNode's connection carries.
"""

from __future__ import annotations

import os
import random
import selectors
import signal
import socket
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["free_port", "wait_for_port", "usable_cores", "source_first", "ProcessGroup",
           "CountingRelay"]


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the system reports one,
    else the machine's count."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def source_first(source, environ=None) -> dict:
    """A copy of ``environ`` (default: this process's) with ``source`` (a folder holding
    ``fedclust``) first on ``PYTHONPATH``, so that a Python started with it imports that
    fedclust before any an editable install points to."""
    environ = os.environ if environ is None else environ
    return {**environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(source), environ.get("PYTHONPATH")]))}


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def free_port(host: str = "127.0.0.1", *, rng: random.Random | None = None) -> int:
    """A TCP port nothing listens on now, drawn below the kernel's ephemeral range: a port
    the kernel hands out (port 0) can be taken by the next outgoing connection before the
    server that was meant to bind it starts (seen with ten SuperNodes polling)."""
    rng = rng or random.Random()
    low, _ = _ephemeral_range()
    for _ in range(200):
        port = rng.randrange(10000, max(low, 10001))
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, *, timeout: float, host: str = "127.0.0.1",
                  process: subprocess.Popen | None = None, name: str = "") -> None:
    """Wait until something accepts connections on ``host:port``; fail when ``process``
    (the one expected to listen) exits first or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            if sock.connect_ex((host, port)) == 0:
                return
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{name or process.args[0]} exited with code "
                               f"{process.returncode} before listening on {host}:{port}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"nothing listens on {host}:{port} after {timeout:g} s "
                               f"({name})")
        time.sleep(0.1)


@dataclass
class ProcessGroup:
    """Processes started in their own session each, so that stopping one stops every process
    it spawned (Flower's SuperLink and SuperNodes start the ServerApp and ClientApp processes
    as children); use as a context manager, which stops them all on the way out, on
    success and on failure."""

    processes: dict = field(default_factory=dict)
    logs: list = field(default_factory=list)
    #: Put in the environment of every process started (and inherited by what they spawn):
    #: :meth:`stop_all` finds a descendant that left its process group by it.
    marker: str = field(default_factory=lambda: f"fedclust-{uuid.uuid4().hex}")

    def start(self, name: str, args: list, *, log_path, env=None) -> subprocess.Popen:
        """Start ``args`` in a new session (its own process group), output to ``log_path``;
        a name started again (a restart) names the new process, the old one is still
        stopped by :meth:`stop_all`."""
        log = open(log_path, "ab")  # noqa: SIM115 (closed in stop_all; a restart appends)
        self.logs.append(log)
        env = {**(os.environ if env is None else env), _MARKER: self.marker}
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env,
                                   start_new_session=True)
        if name in self.processes:  # a restart: keep stopping the first one too
            self.processes[f"{name}#{process.pid}"] = self.processes.pop(name)
        self.processes[name] = process
        return process

    def kill(self, name: str, sig: int = signal.SIGKILL, wait: float = 10.0) -> None:
        """Send ``sig`` to the process group of ``name`` and wait for its leader to end."""
        process = self.processes[name]
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=wait)

    def stop_all(self, grace: float = 5.0) -> None:
        """SIGTERM every group, SIGKILL what is left after ``grace`` seconds (the groups of
        leaders that already ended too: their children may live on)."""
        for process in self.processes.values():
            _signal_group(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for process in self.processes.values():
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for process in self.processes.values():
            _signal_group(process.pid, signal.SIGKILL)
            try:
                process.wait(timeout=grace)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignored
                pass
        # Flower's SuperExec starts the ServerApp in a session of its own: find such
        # descendants by the marker in their environment
        for pid in self.stragglers():
            _signal(pid, signal.SIGKILL)
        deadline = time.monotonic() + grace  # SIGKILL is delivered, not waited for
        while self.stragglers() and time.monotonic() < deadline:
            time.sleep(0.05)
        for log in self.logs:
            log.close()

    def stragglers(self) -> list[int]:
        """Live processes (not zombies) whose environment holds this group's marker."""
        needle = f"{_MARKER}={self.marker}".encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0") \
                        and (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(entry.name))
            except OSError:  # ended meanwhile, or not ours to read
                continue
        return found

    def __enter__(self) -> ProcessGroup:
        return self

    def __exit__(self, *exc) -> None:
        self.stop_all()


_MARKER = "FEDCLUST_RUNTIME_GROUP"


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class CountingRelay:
    """A TCP relay on loopback that counts the bytes of every connection through it.

    Listens on ``127.0.0.1:port`` (a free one) and forwards each accepted connection to
    ``target``; ``connections`` holds, per connection, the bytes the client sent
    (``up``) and received (``down``): every byte of the TCP stream, the HTTP framing, the
    polling and the heartbeats included (TCP/IP headers not). One thread runs a selector over
    every socket.
    """

    def __init__(self, target: tuple[str, int], *, chunk: int = 1 << 16):
        self.target = target
        self.chunk = chunk
        self.connections: list[dict] = []
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self._listener.setblocking(False)
        self.port = self._listener.getsockname()[1]
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ, None)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"relay-{self.port}")
        self._thread.start()

    @property
    def bytes_up(self) -> int:
        with self._lock:
            return sum(c["up"] for c in self.connections)

    @property
    def bytes_down(self) -> int:
        with self._lock:
            return sum(c["down"] for c in self.connections)

    def _run(self) -> None:
        while not self._stop.is_set():
            for key, _ in self._selector.select(timeout=0.1):
                if key.data is None:
                    self._accept()
                else:
                    self._forward(key.fileobj, *key.data)

    def _accept(self) -> None:
        try:
            client, _ = self._listener.accept()
        except BlockingIOError:
            return
        try:
            upstream = socket.create_connection(self.target, timeout=5)
        except OSError:
            client.close()
            return
        record = {"up": 0, "down": 0}
        with self._lock:
            self.connections.append(record)
        for sock in (client, upstream):
            sock.setblocking(False)
        self._selector.register(client, selectors.EVENT_READ, (upstream, record, "up"))
        self._selector.register(upstream, selectors.EVENT_READ, (client, record, "down"))

    def _forward(self, source, sink, record, direction) -> None:
        try:
            data = source.recv(self.chunk)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._close(source, sink)
            return
        try:
            sink.setblocking(True)  # loopback: a short blocking send keeps the order simple
            sink.sendall(data)
            sink.setblocking(False)
        except OSError:
            self._close(source, sink)
            return
        with self._lock:
            record[direction] += len(data)

    def _close(self, *socks) -> None:
        for sock in socks:
            try:
                self._selector.unregister(sock)
            except (KeyError, ValueError):
                pass
            sock.close()

    def close(self) -> None:
        """Stop relaying and close every socket."""
        self._stop.set()
        self._thread.join(timeout=5)
        for key in list(self._selector.get_map().values()):
            key.fileobj.close()
        self._selector.close()
