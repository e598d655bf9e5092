"""``python -m benchmarks [--quick]``: print the table and write benchmarks/results.json."""

from benchmarks.run import main

raise SystemExit(main())
