"""The CI review: baselines (``baseline``), what changed and where the project is (``git``),
known and new pairs and the gate (``review``)."""
