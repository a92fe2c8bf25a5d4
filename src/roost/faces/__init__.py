"""Every way in, side by side, none reaching into another: ``roost`` and ``rosterd`` (``cli``), the
agents' hook (``hook``), the HTTP, SSE and WebSocket routes (``api``), the MCP server (``mcp``)
and the web app's files (``web``).
"""
