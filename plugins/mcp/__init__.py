"""muninn's guarded MCP server: the only way an agent reaches OpenViking, the vault and the inventory."""
