"""Handlers of the sidecar/* methods, one module per domain; each is decode → service call → encode."""
