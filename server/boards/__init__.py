"""Daily leaderboards in Redis."""
