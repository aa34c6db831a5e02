"""The wire: WebSocket connections, the request table, per-connection rate limits, web files."""
