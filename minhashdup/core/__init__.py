"""Pure algorithms over numpy arrays: no I/O, no processes."""
