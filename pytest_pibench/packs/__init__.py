"""domain: see README "Architecture"."""
