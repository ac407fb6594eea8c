"""Settings: the `sidecar` section, the workspace settings file, and which source wins."""
