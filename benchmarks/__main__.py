"""python -m benchmarks: run the benchmark suite (see benchmarks/run.py and docs/benchmarks.md)."""

import sys

from .run import main

sys.exit(main())
