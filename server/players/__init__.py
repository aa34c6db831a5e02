"""Players: the registry of names and tokens, daily histories, profiles."""
