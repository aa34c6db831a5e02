# Build stage: the full image has gcc, which setup.py needs to compile the engine with mypyc.
FROM python:3.11 AS build
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY engine engine
COPY protocol protocol
COPY server server
COPY clients clients
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
WORKDIR /app
EXPOSE 8765
CMD ["solitaire-server", "--host", "0.0.0.0", "--port", "8765", "--data-dir", "/data"]
