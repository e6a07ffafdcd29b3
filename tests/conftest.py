import sys
from pathlib import Path

# Tests share builders.py; the suite runs from the repository root.
sys.path.insert(0, str(Path(__file__).parent))
