"""scenario: see README "Architecture"."""
