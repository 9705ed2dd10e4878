"""checks: see README "Architecture"."""
