"""The Redis layer: connecting (single, embedded, cluster), key names, group commit, pub/sub."""
