"""Model I/O: three transports (chat SSE, responses SSE, responses WebSocket), one event stream."""
