"""convcheck: a differential fuzzer for the argument checks of a convolution kernel."""

from convcheck.case import Case, TensorSpec
from convcheck.errors import ConvcheckError, InvalidCase

__all__ = ["Case", "ConvcheckError", "InvalidCase", "TensorSpec"]
__version__ = "0.1.0"
