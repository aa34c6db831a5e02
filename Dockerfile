# Build stage: the full image has gcc, which setup.py needs to compile the engine with mypyc.
# Dependencies are pinned by deploy/constraints.txt (make constraints regenerates it).
FROM python:3.11 AS build
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY deploy/constraints.txt deploy/constraints.txt
COPY engine engine
COPY protocol protocol
COPY server server
COPY clients clients
RUN pip wheel --no-cache-dir --wheel-dir /wheels -c deploy/constraints.txt .

FROM python:3.11-slim
COPY --from=build /wheels /wheels
COPY deploy/constraints.txt /tmp/constraints.txt
RUN pip install --no-cache-dir --no-index --find-links /wheels -c /tmp/constraints.txt \
        multiplayer-solitaire \
    && rm -rf /wheels /tmp/constraints.txt \
    && useradd --system --uid 10001 --home-dir /app --create-home solitaire \
    && mkdir -p /data && chown solitaire:solitaire /data && chmod 700 /data
USER solitaire
WORKDIR /app
EXPOSE 8765
# Ready means Redis answers too (the balancer checks the same /readyz); a process that is up
# but cut off from Redis is taken out of rotation rather than restarted.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8765/readyz', timeout=2).status != 200)"]
CMD ["solitaire-server", "--host", "0.0.0.0", "--port", "8765", "--data-dir", "/data"]
