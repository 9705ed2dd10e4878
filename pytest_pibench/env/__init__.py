"""env: see README "Architecture"."""
