"""`sidecar acp`: the Agent Client Protocol (ACP v1, newline-delimited JSON-RPC on stdio) on the sidecar's services."""
