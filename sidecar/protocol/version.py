"""The wire protocol's version, which editors compare with the one they were built for (docs/protocol.md)."""

from __future__ import annotations

#: Raise it with every change that an older editor or an older server cannot follow (a method renamed or removed, a
#: field's meaning changed, a field a client needs added). Editors refuse nothing: they say in words what differs and
#: offer to reinstall the server. The package version (sidecar.__version__) is a separate number.
PROTOCOL_VERSION = 1

#: Where `initialize` reports it: `capabilities.experimental[EXPERIMENTAL_KEY]` is `{"protocolVersion": N}`.
EXPERIMENTAL_KEY = "sidecar"
