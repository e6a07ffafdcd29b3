"""Text for people: the model's trace (``explain``)."""

from __future__ import annotations

from convcheck.model import ModelFinding, ModelRun, predict


def format_trace(model_run: ModelRun, findings: list[ModelFinding] = (), verbose: bool = False) -> str:
    """Each step with its arithmetic; wrapped, narrowed and undefined steps marked.

    Steps without arithmetic are one line; ``verbose`` shows every operation, otherwise
    only the steps that did arithmetic show their operations.
    """
    lines = [f"revision {model_run.revision}, {'exact' if model_run.exact else 'C'} arithmetic"]
    for number, step in enumerate(model_run.steps, 1):
        lines.append(f"{number:3d} {step.name:<20} {step.result}")
        for op in step.ops:
            if not (verbose or op.flag):
                continue
            mark = f"   <-- {op.flag}" if op.flag else ""
            lines.append(f"        {op.site:<40} {op.text} = {op.result}{mark}")
    lines.append(f"verdict: {model_run.outcome.describe()}")
    for event in model_run.ub:
        lines.append(f"undefined behaviour: {event.describe()}")
    for event in model_run.narrowing:
        lines.append(f"narrowing: {event.describe()}")
    sanitized = predict(model_run, with_loops=True)
    if sanitized != model_run.outcome:
        lines.append(f"a sanitized build: {sanitized.describe()}")
    for finding in findings:
        lines.append(f"finding: {finding.describe()}")
    return "\n".join(lines)
