"""Races: the service, its Redis store and typed model, the referee, clock, fan-out, spectators,
matchmaking and ratings."""
