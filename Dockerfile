FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY engine engine
COPY protocol protocol
COPY server server
COPY clients clients
RUN pip install --no-cache-dir .
EXPOSE 8765
CMD ["solitaire-server", "--host", "0.0.0.0", "--port", "8765", "--data-dir", "/data"]
