"""The core names no convolution parameter (issue 28): outside ``convcheck/ops/`` (the
registry's ``ops/__init__.py`` is the core's too), no code, Python or C, says groups,
dilation, output_padding or transposed. Docstrings and comments may, as examples."""

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "convcheck"
NAMES = ("groups", "dilation", "output_padding", "transposed")
WORD = re.compile(r"\b(" + "|".join(NAMES) + r")\b")
C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def core_files(suffixes):
    for path in sorted(PACKAGE.rglob("*")):
        in_an_op = path.is_relative_to(PACKAGE / "ops") and path != PACKAGE / "ops/__init__.py"
        if path.suffix in suffixes and not in_an_op:
            yield path


def python_says(source: str) -> list[tuple[int, str]]:
    """Each parameter name the code says, by line: as a name, an attribute, an argument
    or keyword, or a word of a string that is not a docstring."""
    tree = ast.parse(source)
    docstrings = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    said = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            words = [node.id]
        elif isinstance(node, ast.Attribute):
            words = [node.attr]
        elif isinstance(node, (ast.arg, ast.keyword)) and node.arg:
            words = [node.arg]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            words = [] if id(node) in docstrings else WORD.findall(node.value)
        else:
            words = []
        said += [(node.lineno, word) for word in words if word in NAMES]
    return sorted(said)


def c_says(source: str) -> list[str]:
    return WORD.findall(C_COMMENT.sub("", source))


def test_no_core_python_names_a_convolution_parameter():
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: {word}"
        for path in core_files({".py"})
        for line, word in python_says(path.read_text())
    ]
    assert found == []


def test_no_core_c_names_a_convolution_parameter():
    found = [
        f"{path.relative_to(PACKAGE)}: {word}"
        for path in core_files({".c", ".h"})
        for word in c_says(path.read_text())
    ]
    assert found == []


def test_the_checks_see_code_and_pass_over_docs():
    python = (
        '"""groups, in a docstring."""\n'
        "report_groups = 1\n"
        "x = case.dilation\n"
        "f(transposed=True)\n"
        "y = case['output_padding']\n"
        "groups = 2\n"
    )
    assert python_says(python) == [
        (3, "dilation"),
        (4, "transposed"),
        (5, "output_padding"),
        (6, "groups"),
    ]
    c = "/* groups */ int n_groups; // dilation\nint dilation = 1;\n"
    assert c_says(c) == ["dilation"]
