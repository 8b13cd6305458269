"""What is computed on top of a scan or two files: compare, evaluate."""
