"""Session recording: folder layout and store, reader, writer, the live recorder, Gemini CLI import, the CLI."""
