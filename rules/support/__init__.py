"""Analysis helpers shared by several rules (pure functions over snapshot data)."""
