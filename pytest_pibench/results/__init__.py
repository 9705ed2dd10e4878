"""results: see README "Architecture"."""
