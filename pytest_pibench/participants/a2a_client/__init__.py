"""a2a: see README "Network mode (A2A)"."""
