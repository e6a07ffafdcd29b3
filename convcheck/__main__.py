import sys

from convcheck.cli import main

sys.exit(main())
