"""sidecar: an editor agent sidecar for Gemini, spoken to over JSON-RPC on stdio."""

__version__ = "0.1.0"
