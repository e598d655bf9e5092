"""``python -m benchmarks [--quick] [--output FILE] [--only NAMES]``: see ``benchmarks/README.md``."""

from benchmarks.run import main

raise SystemExit(main())
