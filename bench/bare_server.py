"""A bare pygls 2 language server on stdio: the baseline of the sidecar's spawn-to-initialize time."""

from pygls.lsp.server import LanguageServer

if __name__ == "__main__":
    LanguageServer("bare", "0.0.0").start_io()
