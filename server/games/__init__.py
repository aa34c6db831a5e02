"""Daily deals and authoritative play: the game service, its Redis store, seeds and the solver."""
