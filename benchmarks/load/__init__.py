"""Load, scale and fault harness of the solitaire WebSocket service.

Modules:
    procs        start/stop server, echo and redis-server processes; RSS; free ports
    echo_server  a bare aiohttp WebSocket server that decodes and echoes msgpack frames
    generator    the multi-process load generator (simulated players over real WebSockets)
    connections  many idle authenticated WebSockets on one process: memory per connection
    lbbench      leaderboard submissions/s and query latency on a 1,000,000-entry board

``python benchmarks/server_bench.py [--quick]`` runs them all and prints the figures.
"""
