"""No import back up the pipeline: each module imports its own layer and those below it.

The layers run from what a person starts down to what everything shares (DESIGN.md,
section 6). A module is in the layer of the longest name below that is its own or one of
its packages'; a module in no layer fails the test, so that a new one is placed on purpose.
"""

from test_layout import graph

# The ops beside convolution, whose pieces sit beside convolution's.
OTHER_OPS = ("constant_pad_nd", "max_pool2d_with_indices_backward", "convolution_backward")
_POOLING = ("avg_pool2d", "max_pool2d_with_indices")

# From the top; names relative to ``convcheck.`` ("" is the package itself).
LAYERS = [
    ["__main__", "cli", "commands", "ci", "export", "ops.convolution.upstream"],
    ["engines", "strategies"],  # what proposes cases
    # An op's own object gathers its pieces from every layer below (the core finds it
    # through the registry, by name, never by an import).
    [
        "ops.convolution",
        *(f"ops.{op}" for op in OTHER_OPS),
        *(f"ops.{op}" for op in _POOLING),
        "ops.pooling.op",
    ],
    ["campaign", "shards", "merge"],  # what judges them, in batches and processes
    ["solver"],  # what solves the model's steps: witnesses, proofs
    ["report", "report_ci", "report_html"],
    ["corpus"],
    ["shrink", "ops.convolution.shrink", "ops.max_pool2d_with_indices_backward.shrink"],
    # The judges, and the targets and torch they start.
    ["judges", "check_ids"],
    ["ops.convolution.executorch_source", "ops.convolution.differences", "ops.pooling.differences"]
    + ["ops.pooling.executorch_source"]
    + ["ops.pooling.torch_judge"],
    # The other ops' torch mappings read convolution's ATen helpers.
    [f"ops.{op}.{m}" for op in OTHER_OPS for m in ("torch_checks", "differences")],
    [
        "ops.convolution.torch_oracle",
        "ops.convolution.executorch_target",
        "ops.pooling.executorch_target",
        # What every op's ExecuTorch wheel target shares.
        "executorch_wheel",
        "native",
        # Convolution's Python worker and its ABI's ctypes types.
        "ops.convolution.native.worker",
        "ops.convolution.native.abi",
        "ops.pooling.aten",
    ],
    ["targets", "pool_judge"],
    ["findings"],
    ["judgement"],
    # The op and the model: steps over the arithmetic, the cases they are run on.
    # The other ops' pieces read convolution's (its checks, its class lookup): each sits
    # one layer above the convolution piece it reads.
    [f"ops.{op}.{m}" for op in OTHER_OPS for m in ("known_bugs", "solving")],
    [f"ops.convolution.{m}" for m in ("known_bugs", "report", "solving")]
    + [f"ops.pooling.{m}" for m in ("known_bugs", "report", "solving")]
    + [f"ops.{op}.known_bugs" for op in _POOLING],
    [f"ops.{op}.{m}" for op in OTHER_OPS for m in ("legacy", "current", "checks", "generate")],
    [
        *(f"ops.convolution.{m}" for m in ("legacy", "current", "checks", "case", "generate")),
        *(f"ops.{op}.case" for op in OTHER_OPS),
        "ops.pooling",
        *(f"ops.{op}.{m}" for op in _POOLING for m in ("legacy", "current", "case", "generate")),
    ],
    ["model", "generate", "fuzzed", "values", "describe"],
    ["", "case", "simplicity"],
    ["sandbox", "sanitizer", "progress", "lazy", "_worker_main"],
    # An op's C pieces (``ops.convolution.native``) are data: where its sources are.
    [
        "registry",
        "steps",
        "ops",
        "ops.convolution.native",
        "ops.constant_pad_nd.native",
        "torch_mapping",
        "outcome",
        "schema",
        "fixedint",
    ]
    + ["native.dtypes", "native.limits", "native.library"]
    + ["frozen", "files", "validation", "errors"],
]


def layer(module: str) -> int:
    name = module.removeprefix("convcheck").removeprefix(".")
    owners = [
        (len(prefix), i)
        for i, names in enumerate(LAYERS)
        for prefix in names
        if name == prefix or name.startswith(prefix + ".") or (prefix == "" and name == "")
    ]
    assert owners, f"{module} is in no layer of LAYERS"
    return max(owners)[1]


def test_no_module_imports_a_layer_above_its_own():
    edges = graph()
    up = sorted(
        f"{module} -> {target}"
        for module, targets in edges.items()
        for target in targets
        if layer(target) < layer(module)
    )
    assert up == []
