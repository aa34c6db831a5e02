"""Process runtime: clock, errors, metrics, loop-lag and garbage-collector probes."""
