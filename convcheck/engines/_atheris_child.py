"""The atheris engine's child process: libFuzzer, coverage-guided over the model.

``atheris.Fuzz()`` owns its process until libFuzzer exits, so the campaign runs this
module as a child. Coverage comes from the model (imported under instrumentation): its
branches mirror the C checks, so libFuzzer steers toward every check. Cases are judged in
batches by the child's own ``Campaign``, which writes each new finding to the corpus the
moment it appears; the parent reads them back and minimises them.

    python -m convcheck.engines._atheris_child --revision legacy --corpus DIR
        [--target LIB] [--no-torch] [--check-map FILE] [--compare id|verdict]
        [--torch-bugs DIR] [--jobs N] [--stats FILE] [--cases N] [--until-first]
        -- [libFuzzer flags and corpus folders]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Not at run time: the model and the ops are imported under instrumentation, in main.
    from convcheck.case import Case

BATCH = 64
FLUSH_SECONDS = 0.5


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    ours, libfuzzer = (
        (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    )
    parser = argparse.ArgumentParser(prog="convcheck.engines._atheris_child")
    parser.add_argument("--revision", default="legacy")
    parser.add_argument("--target")
    parser.add_argument("--corpus", required=True)
    parser.add_argument(
        "--known", default="", help="signature keys already kept, one per line, in a file"
    )
    parser.add_argument("--stats")
    parser.add_argument(
        "--error", required=True, help="where to leave the one line the parent reports"
    )
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--check-map", help="the parent's check map, as a JSON file")
    parser.add_argument("--compare", default="id")
    parser.add_argument("--torch-bugs", help="folder for torch's own bugs")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes per judge")
    parser.add_argument(
        "--until", type=float, help="stop at this time.monotonic() time (the parent's clock)"
    )
    parser.add_argument(
        "--started",
        type=float,
        help="the parent campaign's start (time.monotonic()): findings' times count from it",
    )
    parser.add_argument("--cases", type=int, help="stop after this many judged cases")
    parser.add_argument("--until-first", action="store_true", help="stop at the first finding")
    parser.add_argument("--op", default="convolution", help="the op whose calls are fuzzed")
    args = parser.parse_args(ours)

    import atheris

    # The coverage libFuzzer steers by is the model's: the step runner and the op's steps,
    # whose branches mirror the C checks (the op is imported here, not on first use).
    with atheris.instrument_imports(
        include=["convcheck.model", "convcheck.steps", "convcheck.ops"]
    ):
        from convcheck import model, registry

        registry.get(args.op)

    from pathlib import Path

    from convcheck.campaign import Budget, Campaign
    from convcheck.check_ids import load_map
    from convcheck.errors import ConvcheckError
    from convcheck.fuzzed import case_from_bytes
    from convcheck.judges import Judges
    from convcheck.sandbox import stop_watchdog

    started = time.monotonic() if args.started is None else args.started
    known = set(Path(args.known).read_text().splitlines()) if args.known else set()
    judges = Judges(
        args.revision,
        op=args.op,
        target=args.target,
        jobs=args.jobs,
        use_torch=False if args.no_torch else None,
        check_map=None if args.check_map is None else load_map(args.check_map),
        compare=args.compare,
    )
    run = Campaign(
        judges,
        Path(args.corpus),
        {"found_by": "convcheck fuzz --engine atheris"},
        # The parent shows progress (from --stats); this process's output is libFuzzer's log.
        None,
        known,
        # libFuzzer keeps the time too (-max_total_time), but only between inputs: the
        # campaign's deadline is what cuts a batch on a hanging target short.
        Budget(
            seconds=None if args.until is None else max(0.0, args.until - started),
            cases=args.cases,
            until_first=args.until_first,
        ),
        None if args.torch_bugs is None else Path(args.torch_bugs),
    )
    run.stats.started = started
    pending: list[Case] = []
    timed = args.until is not None
    last_flush = [time.monotonic()]

    def flush() -> None:
        if pending:
            try:
                run.submit(pending[: run.room(len(pending))])
            except ConvcheckError as e:
                # A finding could not be written (a full disk): the parent must say so,
                # and libFuzzer would only report a crash of the harness.
                Path(args.error).write_text(str(e))
                judges.close()
                stop_watchdog()  # atexit's, which os._exit skips
                os._exit(2)
            pending.clear()
        last_flush[0] = time.monotonic()
        if args.stats:
            write_stats(args.stats, run)
        if run.exhausted:
            # libFuzzer has no clean way out of a callback; everything is written.
            judges.close()
            stop_watchdog()
            os._exit(0)

    def test_one_input(data: bytes) -> None:
        case = case_from_bytes(data, args.op)
        model.classify(case, args.revision)  # the coverage signal
        pending.append(case)
        # Judging a batch runs the model too, and libFuzzer counts that coverage toward
        # the input that flushed it: batches cut by the clock would make a case budget's
        # inputs depend on the machine's speed. Only a time budget flushes by the clock
        # (so that its findings show while it runs).
        due = timed and time.monotonic() - last_flush[0] > FLUSH_SECONDS
        if len(pending) >= run.batch(BATCH) or due:
            flush()

    atheris.Setup([sys.argv[0], *libfuzzer], test_one_input)
    atheris.Fuzz()


def write_stats(path: str, run) -> None:
    """Cases judged and when each signature was first seen, for the parent's report, and
    a case of each known signature met again: the corpus folder has only the new ones (the
    known may be kept elsewhere, as ``ci`` keeps the reviewed corpus)."""
    met_again = {key: run.found[key].case.to_json() for key in run.found if key in run.known}
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        # The times count from the parent's start (--started): they are the campaign's.
        json.dump(
            {
                "cases": run.stats.cases,
                "first_found": run.stats.first_found,
                "met_again": met_again,
            },
            f,
        )
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
