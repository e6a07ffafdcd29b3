"""Crafted ExecuTorch programs beside exir's."""

import dataclasses

from convcheck.executorch_wheel.flatbuffer import STATIC


def without_memory_plan(program):
    """``program`` (exir's ``Program``) without what the crafting chooses itself: the
    memory plan, and each tensor's dynamism (every tensor made static)."""
    plan = program.execution_plan[0]
    values = []
    for value in plan.values:
        val = value.val
        if type(val).__name__ == "Tensor":
            val = dataclasses.replace(val, allocation_info=None, shape_dynamism=STATIC)
        values.append(dataclasses.replace(value, val=val))
    plan = dataclasses.replace(plan, values=values, non_const_buffer_sizes=None)
    return dataclasses.replace(program, execution_plan=[plan])
