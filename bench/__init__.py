"""Benchmarks of the sidecar against its targets (issue 9); run with `python -m bench` or `make bench`."""
