"""participants: see README "Architecture"."""
