"""What is computed on top of a scan or of two files: compare, evaluate, tuning, and the regions
that the SARIF and HTML reports show (computed here, before rendering)."""
