"""``python -m headerlock``: the command-line interface."""

from headerlock.cli import main

raise SystemExit(main())
