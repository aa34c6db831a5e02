"""A Jepsen-style chaos test of the production topology (issue #25, docs/reliability.md).

Three server processes behind HAProxy (deploy/haproxy.cfg) on one Redis, or on a Redis Cluster;
simulated daily players and racers keep a `history` of everything they sent and received while
a seeded `nemesis` kills, pauses and drains server processes and restarts Redis. Afterwards the
`checker` proves properties on the histories and on what Redis holds. `run` ties them together;
``python -m tests.support.chaos --seed N --duration S`` replays a seed (`make chaos`).

    history   typed records of operations (pure)
    checker   the properties, as functions of a history and the stored games (pure)
    workload  the simulated clients (asyncio, real WebSockets through the balancer)
    nemesis   the fault schedule drawn from a seed, and its execution
    run       the topology, the run, the settle phase and the summary table
"""
