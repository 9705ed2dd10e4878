"""llm: see README "Architecture"."""
