"""The CI review: baselines, changed files from git, the gate."""
