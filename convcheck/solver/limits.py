"""How much work z3 may do on one query: its deterministic resource limit, not a clock.

A wall-clock timeout makes an answer depend on the machine's load: a query that runs out
of time on a busy machine is unknown there and a witness on a quiet one, and the cached
seeds, and so every seeded campaign, then differed from machine to machine. z3's
``rlimit`` counts the solver's own steps instead: the same query on the same z3 gives the
same answer anywhere. The limit is per ``check`` (z3 adds it to the count at the call:
the earlier checks of an incremental solver do not use it up), and ``Optimize`` honours
it as a ``Solver`` does.

Calibrated on ``prove legacy --rank 3``: each limit lets through what the wall-clock
timeout it replaced did (the step counts and rates are in CHANGELOG.md, 2026-12-03); the
satisfiable queries used at most 11.3 M steps.

The answer also depends on the terms z3 made before in the same context (their ids order
its search: one shape explored after another took other paths than alone), so each unit
of solving starts a context of its own (``fresh_context``): what a shape or a witness
gets does not depend on which process solved what before it.
"""

from __future__ import annotations

import z3

# A branch or site query, on a fresh solver. Every satisfiable query of the
# calibration run fits; one that needs more is left unknown.
QUERY = 16_000_000
# Every query first, on a fresh solver: every unsatisfiable query of the calibration run
# and most satisfiable ones are answered within these steps (z3 counts few steps for
# the seconds its simplex spends on 2^64-sized numbers: a step limit near the answer
# costs little time, one far above it can cost seconds).
QUICK = 30_000
# Then the same query on the path's incremental solver: it answers 99 % of the
# satisfiable queries within 2 M steps; past that, a fresh solver (which keeps z3's
# non-incremental tactics) mostly answers within 1 M where the incremental one ran out.
INCREMENTAL = 3_000_000
# A fresh solver without Groebner bases (``arith.nl.grobner``), where the incremental one
# ran out, before the fresh one with them (``QUERY``): on legacy rank 3 it answered 8 of
# the 9 such queries within 0.3 M steps, the branch left unknown after 16 M steps with
# them among them (the ninth: the fresh one with them, in 0.2 M).
NO_GROEBNER = 1_000_000
# The same before the incremental solver, on a path with size_t (modulo 2^64) values
# (``Path.wrapped_size_t``): legacy's satisfiable answers there took at most 0.3 M steps.
NO_GROEBNER_FIRST = 300_000
# The default engine's seeds and the band cases: half a query.
CHEAP = QUERY // 2
# One bounded tier of ``Optimize``: the bounded witnesses needed at most 4 M.
BOUNDED = 6_000_000
# One query of a witness's minimisation (``minimise.smallest``): is there a cheaper input?
# Most are proven in a few thousand steps; on some int32 products a query that
# needs more keeps bisecting for seconds, for a witness a little smaller still.
SHRINK = 1_000_000
# ``Optimize`` without bounds: the largest minimised witness needed 9 M; one
# that is not done by 12 M was not done by 30 M either (the path's input is kept).
MINIMISE = 12_000_000
# Every limit above, for the solver cache's key (``cache``): other limits, other answers.
STEPS = ", ".join(f"{name} {value}" for name, value in sorted(globals().items()) if name.isupper())


def solver(rlimit: int, groebner: bool = True, context: z3.Context | None = None) -> z3.Solver:
    """z3's SMT core, for one query or for push and pop.

    Not ``z3.Solver()``: without a push it runs z3's ``qfnia`` strategy, which gives the
    SMT core 2 s of wall-clock time before it tries others (``try_for``), so its answer
    depended on the load again (and the strategy's preprocessing, run alone under a
    step limit, overran it by minutes). A query asserted on a fresh core, without a
    push, still gets the core's own preprocessing (solving equations, dropping
    unconstrained terms), which an incremental solver gives up.
    """
    s = z3.SimpleSolver(ctx=context)
    s.set("rlimit", rlimit)
    if not groebner:
        s.set("arith.nl.grobner", False)
    return s


def optimizer(rlimit: int) -> z3.Optimize:
    opt = z3.Optimize()
    opt.set("rlimit", rlimit)
    return opt


def fresh_context() -> None:
    """Every z3 term made from now on is in a new context (z3's default one, replaced):
    the terms of an earlier context must not be used with them."""
    z3.z3._main_ctx = None  # z3.main_ctx() makes the next one on demand
