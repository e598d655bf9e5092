"""The test suite: one folder per subsystem of ``src/headerlock``, shared helpers here."""
