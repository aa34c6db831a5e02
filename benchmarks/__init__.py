"""Benchmarks (run as scripts: python benchmarks/server_bench.py, ...)."""
