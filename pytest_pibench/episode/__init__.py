"""episode: see README "Architecture"."""
