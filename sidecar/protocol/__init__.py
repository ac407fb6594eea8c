"""The wire contract: method names, params/result/notification types and error codes (docs/protocol.md)."""
