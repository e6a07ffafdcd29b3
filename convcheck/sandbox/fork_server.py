"""The fork server's parent side: the process that forks workers in milliseconds (see
``convcheck/_worker_main.py`` and ``worker_main.c`` for its side), asked for one worker at a
time over a Unix socket that carries the worker's descriptors, answering in order."""

from __future__ import annotations

import os
import select
import socket
import time
from contextlib import suppress
from typing import Any

from convcheck.sandbox import protocol
from convcheck.sandbox.processes import Adopted, Child, ForkRefused, Launch

_FORK_TIMEOUT = 10.0  # seconds for the fork server to answer: a fork, on a busy machine


class ForkServer(Child):
    """The process that forks workers (see ``_worker_main``), started as ``launch`` says.

    Its marker ends in a fixed-width number, which each worker it forks overwrites with
    its own pid, in place: so the parent knows every forked worker's marker.
    """

    def __init__(self, env: dict[str, str], launch: Launch) -> None:
        self.base = self._new_marker()
        self.marker = self.marker_of(0)
        self.socket, theirs = socket.socketpair()
        try:
            self._open(env, theirs.detach(), None, launch)
        except BaseException:
            self.socket.close()
            raise
        self.partial = b""
        with suppress(BrokenPipeError):  # it died at once: read_line says how
            self.socket.sendall(launch.start_line)

    def marker_of(self, pid: int) -> str:
        return f"{self.base}.{pid:010d}"

    def send_fork(self, request_read: int, result_write: int, output: Any) -> None:
        """Ask for a new worker reading ``request_read``, writing ``result_write`` and
        ``output``; ``forked`` reads the answer."""
        try:
            socket.send_fds(
                self.socket, [protocol.FORK], [request_read, result_write, output.fileno()]
            )
        except OSError:
            raise ForkRefused(for_good=False) from None

    def forked(self) -> Adopted:
        """The worker asked for last: the server answers in order."""
        line = self.read_line(time.monotonic() + _FORK_TIMEOUT)
        if line and line[:1] == protocol.FORKED:
            return Adopted(int(line[1:]))
        raise ForkRefused(for_good=line is not None and line[:1] == protocol.FORK_REFUSED)

    def read_line(self, until: float, wake_fd: int | None = None) -> bytes | None:
        """The server's next line; b"" once it has died; None at ``until`` (a
        ``time.monotonic()`` time) or when ``wake_fd`` is readable."""
        while protocol.END_OF_LINE not in self.partial:
            poller = select.poll()
            for fd in (self.result_fd, self.exit_fd, wake_fd):
                if fd is not None:
                    poller.register(fd, select.POLLIN)
            timeout = max(0.0, until - time.monotonic()) * 1000 + 1
            ready = [fd for fd, _ in poller.poll(timeout)]
            if self.result_fd in ready:
                data = os.read(self.result_fd, 4096)
                if not data:
                    return b""
                self.partial += data
            elif self.exit_fd in ready:
                return b""
            elif ready or time.monotonic() >= until:
                return None
        line, _, self.partial = self.partial.partition(protocol.END_OF_LINE)
        return line

    def _close_channel(self) -> None:
        self.socket.close()
