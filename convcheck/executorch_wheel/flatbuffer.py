"""A one-instruction ExecuTorch program, written as ``.pte`` flatbuffer bytes.

This writes the part of ExecuTorch's ``program.fbs`` (``executorch/exir/_serialize``)
that a program of one ``KernelCall`` uses, with the ``flatbuffers`` runtime alone: no
``executorch.exir``, whose import costs a worker seconds, and a program written an order
of magnitude faster than by ``exir``'s ``serialize_pte_binary``
(``benchmarks/bench_executorch.py``). The layout of the values is
the one ``torch.export`` -> ``to_edge`` -> ``to_executorch`` emits for the same call;
``tests/executorch/test_crafting.py`` compares the two, field by field.

Slot numbers are the fields' positions in ``program.fbs`` (a union takes two: its type,
then its value). A field left at its default is not written, as ``flatc`` does.
"""

from __future__ import annotations

from dataclasses import dataclass

import flatbuffers

FILE_IDENTIFIER = b"ET12"

# executorch_flatbuffer.ScalarType
SCALAR_TYPES = {
    "uint8": 0,
    "int8": 1,
    "int16": 2,
    "int32": 3,
    "int64": 4,
    "float16": 5,
    "float32": 6,
    "float64": 7,
    "bool": 11,
    "bfloat16": 15,
}
STATIC, DYNAMIC_BOUND = 0, 1  # executorch_flatbuffer.TensorShapeDynamism
PLANNED_MEMORY_ID = 1  # memory id 0 is reserved; exir plans every tensor into id 1

# Union tags: executorch_flatbuffer.KernelTypes and .InstructionArguments
_NULL, _INT, _BOOL, _TENSOR, _INT_LIST, _TENSOR_LIST = 1, 2, 3, 5, 7, 10
_KERNEL_CALL = 1


@dataclass(frozen=True)
class TensorValue:
    """A tensor EValue. ``offset`` None: not memory-planned (no storage in the program)."""

    dtype: str
    sizes: tuple[int, ...]
    dim_order: tuple[int, ...]
    dynamism: int = STATIC
    offset: int | None = None


@dataclass(frozen=True)
class Layout:
    """Everything the program says: its values, which are inputs and outputs, the call."""

    # Of TensorValue, None, ("int", v), ("bool", v), ("int_list", indices) and
    # ("tensor_list", indices): a list names the values it holds by their indices.
    values: tuple
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    args: tuple[int, ...]
    planned_bytes: int
    operator: tuple[str, str]  # (name, overload): ("aten::avg_pool2d", "out")


class Values(list):
    """A program's values as a call's arguments are added to them, each answering with its
    index (what a call's ``args`` hold)."""

    def add(self, value) -> int:
        self.append(value)
        return len(self) - 1

    def int_list(self, items: tuple[int, ...]) -> int:
        """``items`` as exir writes a list: its ``Int`` values, then the ``IntList``."""
        first = len(self)
        self.extend(("int", v) for v in items)
        return self.add(("int_list", tuple(range(first, first + len(items)))))


def _leaf_spec() -> str:
    return '{"type": null, "context": null, "children_spec": []}'


def _tuple_spec(leaves: int) -> str:
    children = ", ".join([_leaf_spec()] * leaves)
    return f'{{"type": "builtins.tuple", "context": "null", "children_spec": [{children}]}}'


def _pytree_strings(n_inputs: int, n_outputs: int) -> tuple[str, str]:
    """The pytree specs ``to_executorch`` stores for ``forward(*inputs)``, which returns a
    tensor, or a tuple of them.

    Only the Python ``Runtime`` API reads them; the C++ runtime ignores them.
    """
    kwargs = '{"type": "builtins.dict", "context": "[]", "children_spec": []}'
    inputs = (
        f'[1, {{"type": "builtins.tuple", "context": "null", "children_spec": '
        f"[{_tuple_spec(n_inputs)}, {kwargs}]}}]"
    )
    outputs = _leaf_spec() if n_outputs == 1 else _tuple_spec(n_outputs)
    return inputs, f"[1, {outputs}]"


def _vector(b: flatbuffers.Builder, items, size: int, prepend) -> int:
    b.StartVector(size, len(items), size)
    for item in reversed(items):
        prepend(item)
    return b.EndVector()


def _tensor(b: flatbuffers.Builder, t: TensorValue) -> int:
    sizes = _vector(b, t.sizes, 4, b.PrependInt32)
    order = _vector(b, t.dim_order, 1, b.PrependUint8)
    allocation = None
    if t.offset is not None:
        b.StartObject(3)  # AllocationDetails
        b.PrependUint32Slot(0, PLANNED_MEMORY_ID, 0)
        b.PrependUint32Slot(1, t.offset & 0xFFFFFFFF, 0)
        b.PrependUint32Slot(2, t.offset >> 32, 0)
        allocation = b.EndObject()
    b.StartObject(10)  # Tensor
    b.PrependInt8Slot(0, SCALAR_TYPES[t.dtype], 0)
    b.PrependUOffsetTRelativeSlot(2, sizes, 0)
    b.PrependUOffsetTRelativeSlot(3, order, 0)
    if allocation is not None:
        b.PrependUOffsetTRelativeSlot(6, allocation, 0)
    b.PrependInt8Slot(8, t.dynamism, 0)
    return b.EndObject()


def _evalue(b: flatbuffers.Builder, value) -> int:
    if value is None:
        b.StartObject(0)  # Null
        tag, payload = _NULL, b.EndObject()
    elif isinstance(value, TensorValue):
        tag, payload = _TENSOR, _tensor(b, value)
    elif value[0] == "int":
        b.StartObject(1)
        b.PrependInt64Slot(0, value[1], 0)
        tag, payload = _INT, b.EndObject()
    elif value[0] == "bool":
        b.StartObject(1)
        b.PrependBoolSlot(0, value[1], False)
        tag, payload = _BOOL, b.EndObject()
    elif value[0] == "int_list":
        items = _vector(b, value[1], 8, b.PrependInt64)
        b.StartObject(1)
        b.PrependUOffsetTRelativeSlot(0, items, 0)
        tag, payload = _INT_LIST, b.EndObject()
    else:
        assert value[0] == "tensor_list", value
        items = _vector(b, value[1], 4, b.PrependInt32)
        b.StartObject(1)
        b.PrependUOffsetTRelativeSlot(0, items, 0)
        tag, payload = _TENSOR_LIST, b.EndObject()
    b.StartObject(2)  # EValue: val_type, val
    b.PrependUint8Slot(0, tag, 0)
    b.PrependUOffsetTRelativeSlot(1, payload, 0)
    return b.EndObject()


def encode(layout: Layout) -> bytes:
    """The ``.pte`` bytes of ``layout``: one plan, "forward", one chain, one kernel call."""
    b = flatbuffers.Builder(2048)
    name = b.CreateString("forward")
    encoded_inputs, encoded_outputs = _pytree_strings(len(layout.inputs), len(layout.outputs))
    inp, out = b.CreateString(encoded_inputs), b.CreateString(encoded_outputs)
    b.StartObject(2)  # ContainerMetadata
    b.PrependUOffsetTRelativeSlot(0, inp, 0)
    b.PrependUOffsetTRelativeSlot(1, out, 0)
    container = b.EndObject()

    values = [_evalue(b, v) for v in layout.values]
    values_vec = _vector(b, values, 4, b.PrependUOffsetTRelative)
    inputs = _vector(b, layout.inputs, 4, b.PrependInt32)
    outputs = _vector(b, layout.outputs, 4, b.PrependInt32)

    args = _vector(b, layout.args, 4, b.PrependInt32)
    b.StartObject(2)  # KernelCall
    b.PrependInt32Slot(0, 0, 0)  # op_index
    b.PrependUOffsetTRelativeSlot(1, args, 0)
    call = b.EndObject()
    b.StartObject(2)  # Instruction: instr_args_type, instr_args
    b.PrependUint8Slot(0, _KERNEL_CALL, 0)
    b.PrependUOffsetTRelativeSlot(1, call, 0)
    instruction = b.EndObject()
    no_values = _vector(b, (), 4, b.PrependInt32)
    instructions = _vector(b, [instruction], 4, b.PrependUOffsetTRelative)
    b.StartObject(4)  # Chain
    b.PrependUOffsetTRelativeSlot(0, no_values, 0)
    b.PrependUOffsetTRelativeSlot(1, no_values, 0)
    b.PrependUOffsetTRelativeSlot(2, instructions, 0)
    chain = b.EndObject()
    chains = _vector(b, [chain], 4, b.PrependUOffsetTRelative)

    op_name, op_overload = (b.CreateString(s) for s in layout.operator)
    b.StartObject(2)  # Operator
    b.PrependUOffsetTRelativeSlot(0, op_name, 0)
    b.PrependUOffsetTRelativeSlot(1, op_overload, 0)
    operator = b.EndObject()
    operators = _vector(b, [operator], 4, b.PrependUOffsetTRelative)
    delegates = _vector(b, (), 4, b.PrependUOffsetTRelative)
    # Buffer 0 is never used (memory id 0 is reserved), as exir writes it.
    buffer_sizes = _vector(b, (0, layout.planned_bytes), 8, b.PrependInt64)

    b.StartObject(10)  # ExecutionPlan
    b.PrependUOffsetTRelativeSlot(0, name, 0)
    b.PrependUOffsetTRelativeSlot(1, container, 0)
    b.PrependUOffsetTRelativeSlot(2, values_vec, 0)
    b.PrependUOffsetTRelativeSlot(3, inputs, 0)
    b.PrependUOffsetTRelativeSlot(4, outputs, 0)
    b.PrependUOffsetTRelativeSlot(5, chains, 0)
    b.PrependUOffsetTRelativeSlot(6, operators, 0)
    b.PrependUOffsetTRelativeSlot(7, delegates, 0)
    b.PrependUOffsetTRelativeSlot(8, buffer_sizes, 0)
    plan = b.EndObject()
    plans = _vector(b, [plan], 4, b.PrependUOffsetTRelative)

    # No constants. As exir writes it: an empty constant_buffer, and a constant segment
    # whose offsets hold only the placeholder 0, in a segment of size 0 (never loaded).
    no_tables = _vector(b, (), 4, b.PrependUOffsetTRelative)
    offsets = _vector(b, (0,), 8, b.PrependUint64)
    b.StartObject(2)  # SubsegmentOffsets
    b.PrependUOffsetTRelativeSlot(1, offsets, 0)
    constant_segment = b.EndObject()
    b.StartObject(2)  # DataSegment: offset 0, size 0
    segment = b.EndObject()
    segments = _vector(b, [segment], 4, b.PrependUOffsetTRelative)

    b.StartObject(8)  # Program
    b.PrependUint32Slot(0, 0, 0)  # version
    b.PrependUOffsetTRelativeSlot(1, plans, 0)
    b.PrependUOffsetTRelativeSlot(2, no_tables, 0)  # constant_buffer
    b.PrependUOffsetTRelativeSlot(3, no_tables, 0)  # backend_delegate_data
    b.PrependUOffsetTRelativeSlot(4, segments, 0)
    b.PrependUOffsetTRelativeSlot(5, constant_segment, 0)
    program = b.EndObject()
    b.Finish(program, file_identifier=FILE_IDENTIFIER)
    return bytes(b.Output())
