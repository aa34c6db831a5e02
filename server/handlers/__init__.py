"""Request handlers, one module per area; each exports a table joined by `transport.dispatch`."""
