"""Talking to Gemini: which endpoint, the client with retries and named errors, the streaming hot path."""
