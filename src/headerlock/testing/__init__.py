"""What users test with: app drivers, run/record/replay of scenarios, pins and
guards, project discovery, load schedules, strategies, order-invariance checks,
flake hunting, wire capture and the pytest plugin. May import
``headerlock.runtime`` and ``headerlock.formats``; never ``headerlock.demo``.
"""
