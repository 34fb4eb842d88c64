"""The built-in tools, one module each; muninn.plugins.mcp.plugin registers them."""
