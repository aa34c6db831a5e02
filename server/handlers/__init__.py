"""Request handlers, one module per area; each exports a `Router`, joined by `routes`."""
