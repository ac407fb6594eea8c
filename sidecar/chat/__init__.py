"""The conversation: the turn loop, running the model's tool calls, switching sessions."""
