# Quick start: `make run` then `make test`. Everything installs into .venv.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
HOST ?= 127.0.0.1
PORT ?= 8765

.PHONY: venv install run test test-pure browser haproxy coverage lint typecheck bench clean \
	secrets constraints screenshots chaos dump-days

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# The engine's rule modules and the protocol's codec are compiled with mypyc (setup.py) into
# $(COMPILED_DIR), outside the source tree, and loaded from there (compiled_build.py: a finder
# installed by a .pth file of the venv). The editable install compiles nothing; $(COMPILED)
# rebuilds whenever a source changed, and a build older than a source is never loaded (the
# source runs instead, with a warning), so no stale library can shadow a source.
COMPILED_DIR := $(abspath $(VENV))/compiled
COMPILED := $(COMPILED_DIR)/compiled.json
COMPILED_SRC := $(wildcard engine/*.py engine/easthaven/*.py protocol/*.py) setup.py \
	$(addprefix server/,transport/connection.py transport/session.py transport/ratelimit.py \
	handlers/games.py games/service.py runtime/metrics.py redis/batch.py redis/resp.py) \
	compiled_build.py
# Where an older make put the libraries, next to their sources: removed wherever found.
IN_TREE_LIBS := engine/*.so engine/*/*.so protocol/*.so *__mypyc*.so

$(STAMP): pyproject.toml setup.py | $(BIN)/python
	SOLITAIRE_PURE_PYTHON=1 $(BIN)/pip install -q -e '.[dev]'
	rm -f $(IN_TREE_LIBS)
	touch $(STAMP)

# A fresh directory each time (no library of a module dropped from the list stays), and the
# library is touched: the build skips C that did not change and copies it with its old date,
# which the staleness check would take for a library older than its sources. With
# SOLITAIRE_PURE_PYTHON=1 nothing is built nor activated: the next make compiles.
$(COMPILED): $(COMPILED_SRC) | $(STAMP)
	rm -f $(IN_TREE_LIBS)
	$(BIN)/python compiled_build.py deactivate $(COMPILED_DIR)
	$(BIN)/python setup.py -q build_ext --build-lib $(COMPILED_DIR)
	touch -c $(COMPILED_DIR)/*__mypyc*.so
	$(BIN)/python compiled_build.py activate $(COMPILED_DIR)

venv install: $(STAMP) $(COMPILED)

run: $(STAMP) $(COMPILED)
	$(BIN)/solitaire-server --host $(HOST) --port $(PORT)

# The browser tests (tests/web) drive Debian's Chromium through Playwright (no browser download):
# installed here when missing and we are root, else the exact command is printed.
CHROMIUM := /usr/bin/chromium
browser:
	@if [ ! -x $(CHROMIUM) ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q chromium; \
	  else echo "$(CHROMIUM) is missing; install it with: sudo apt-get install -y chromium" >&2; \
	    exit 1; fi; \
	fi

# The deployment tests (tests/deploy) start Debian's HAProxy with deploy/haproxy.cfg in front
# of real server processes: installed here when missing and we are root, else the command.
haproxy:
	@if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q haproxy; \
	  else echo "haproxy is missing; install it with: sudo apt-get install -y haproxy" >&2; \
	    exit 1; fi; \
	fi

test: $(STAMP) $(COMPILED) browser haproxy
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest -q

# The suite on the pure-Python build (SOLITAIRE_PURE_PYTHON=1: the compiled build's finder
# stays out, every module runs from its source): CI runs both builds, so a difference between
# the compiled and the pure code fails one of them. The compiled build is kept for `make test`.
test-pure: $(STAMP) browser haproxy
	rm -f $(IN_TREE_LIBS)
	SOLITAIRE_PURE_PYTHON=1 $(BIN)/pytest -q -p no:cacheprovider

# The suite under coverage.py, subprocesses included (`[tool.coverage.run] patch` in
# pyproject.toml); writes coverage.json and fails when a package is below its floor.
# coverage.py cannot see into compiled modules: everything runs as Python here
# (SOLITAIRE_PURE_PYTHON=1, as for test-pure).
coverage: $(STAMP) browser haproxy
	rm -f .coverage .coverage.* coverage.json $(IN_TREE_LIBS)
	SOLITAIRE_PURE_PYTHON=1 $(BIN)/coverage run -m pytest -q -p no:cacheprovider; status=$$?; \
	$(BIN)/coverage combine -q && $(BIN)/coverage json -q && \
	$(BIN)/coverage report --skip-covered --sort=cover | tail -n 40 && \
	$(BIN)/python -m tests.support.coverage_floors coverage.json && exit $$status

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# Long chaos runs (docs/reliability.md): three servers behind HAProxy on one Redis while
# processes are killed, paused and drained and Redis restarts; a table per seed. A failing
# seed replays: python -m tests.support.chaos --seed N --duration S --keep DIR.
CHAOS_SEEDS ?= 11 12 13
chaos: $(STAMP) $(COMPILED) haproxy
	$(BIN)/python -m tests.support.chaos $(foreach s,$(CHAOS_SEEDS),--seed $(s)) --duration 180
	$(BIN)/python -m tests.support.chaos --cluster --seed 21 --duration 180

# The topology benchmarks (three servers behind HAProxy on one Redis) need the balancer.
bench: $(STAMP) $(COMPILED) haproxy
	$(BIN)/python benchmarks/engine_bench.py
	$(BIN)/python benchmarks/solver_bench.py
	$(BIN)/python benchmarks/server_bench.py --rounds 3
	$(BIN)/python benchmarks/churn_bench.py
	$(BIN)/python benchmarks/cluster_bench.py
	$(BIN)/python benchmarks/reconnect_storm.py
	$(BIN)/python benchmarks/midnight_rush.py
	$(BIN)/python benchmarks/calibrate.py
	$(BIN)/pytest -q -m slow

# Open data (docs/api.md): closed days FROM..TO (YYYY-MM-DD) to $(OUT)/results-DATE.ndjson.gz,
# from REDIS_URL or the embedded Redis of a server running on ./data.
OUT ?= dumps
dump-days: $(STAMP)
	@test -n "$(FROM)" || { echo "usage: make dump-days FROM=YYYY-MM-DD [TO=YYYY-MM-DD] [OUT=dir]"; exit 2; }
	$(BIN)/python -m server.api.dump --from $(FROM) $(if $(TO),--to $(TO)) --out $(OUT)

# docs/screenshots: refreshed by the browser tests when asked (never by `make test`);
# tests/web/test_a11y.py takes every page at desktop and phone width, in both themes.
screenshots: $(STAMP) $(COMPILED) browser
	SOLITAIRE_SCREENSHOTS=1 $(BIN)/pytest -q -p no:cacheprovider tests/web

# docker compose reads its secrets from files (docker-compose.yml): made once, random, in a
# folder only this user can enter (the files themselves must stay readable by the container's
# non-root user).
secrets:
	@mkdir -p deploy/secrets && chmod 700 deploy/secrets
	@for f in daily_secret redis_password; do \
	  [ -s deploy/secrets/$$f ] || $(PY) -c 'import secrets; print(secrets.token_hex(32))' \
	    > deploy/secrets/$$f; done
	@echo "deploy/secrets: daily_secret, redis_password"

# The image's pinned dependencies (Dockerfile), from a fresh install of the runtime
# dependencies alone (no dev extras, nothing compiled).
constraints:
	rm -rf build/constraints-venv
	$(PY) -m venv build/constraints-venv
	SOLITAIRE_PURE_PYTHON=1 build/constraints-venv/bin/pip install -q .
	{ sed -n '1,3p' deploy/constraints.txt; build/constraints-venv/bin/pip freeze \
	  --exclude multiplayer-solitaire --exclude pip | sort; } > deploy/constraints.new
	mv deploy/constraints.new deploy/constraints.txt
	rm -rf build/constraints-venv

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
	rm -f $(IN_TREE_LIBS)
	rm -f .coverage .coverage.* coverage.json
