"""The JSON-RPC layer, the only one that imports pygls/lsprotocol: server lifecycle, dispatch, handlers, transport."""
