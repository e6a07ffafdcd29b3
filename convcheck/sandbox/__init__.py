"""Worker processes that may die: where native code and torch run.

A ``WorkerPool`` hands batches of JSON requests to worker processes and returns one
result per request, in order: the handler's dict, a ``Crash`` (the process died, or the
handler raised) or a ``Hang`` (no result within the timeout). A worker that crashes or
hangs is killed and replaced, and the batch carries on with the next request. A batch
can be abandoned (``cancel``, a ``deadline``): busy workers are killed at once, and the
requests that did not finish come back as None.

Every process a worker starts is reaped with it: the parent is a child subreaper
(PR_SET_CHILD_SUBREAPER), so a target's child that calls setsid and outlives its worker
comes back to the parent, which knows it by its session or by a marker in its
environment, and kills and reaps it. (A process that leaves the session *and* clears its
environment escapes; so does everything if the parent itself is SIGKILLed, which only a
cgroup would contain.) A worker that cannot be restarted after a crash (a library whose
constructor fails on a later load) is no set-up error: while other workers run, the pool
carries on without it; when none is left, each request left gets a ``restart-failed``
Crash. Only a pool whose very first worker cannot start raises.

With ``WorkerSpec.fork_server``, the workers are forked by a fork server: one process
that has started once (the sanitizer runtime, the handler's module, ``init``) and forks
a fresh worker in milliseconds, so a crash no longer costs a start. It forks workers
ahead (one; one per job for a program worker), so a crashed worker's replacement is ready
and the parent waits for no fork. A
forked worker is the parent's own child, with its own session, marker, timeout and
memory limit, exactly like a started one. When forking is not safe (the server has grown a
thread) or the server cannot start again, the pool falls back to starting workers.

The worker's side is ``convcheck/_worker_main.py``. A worker may instead be a program
(``WorkerSpec.program``, such as the native judge's C worker,
``convcheck/native/worker_main.c``): it is started, or forked by its own fork server, the
same way, with the same guarantees; its requests and results are bytes, framed as
records. The protocol between the parent and either worker is defined once, in
``convcheck.sandbox.protocol``.
"""

from __future__ import annotations

from convcheck.sandbox.crashes import Crash, Hang
from convcheck.sandbox.descendants import (
    FROZEN_PYTHON,
    own_session,
    private_temporary_directory,
    python_env,
    reap_resource_tracker_at_exit,
    run_reaped,
    stop_watchdog,
)
from convcheck.sandbox.pool import WorkerPool
from convcheck.sandbox.processes import WorkerSpec
from convcheck.sandbox.protocol import record_string

__all__ = [
    "FROZEN_PYTHON",
    "Crash",
    "Hang",
    "WorkerPool",
    "WorkerSpec",
    "own_session",
    "private_temporary_directory",
    "python_env",
    "reap_resource_tracker_at_exit",
    "record_string",
    "run_reaped",
    "stop_watchdog",
]
