"""The built-in tools. Importing a module registers its tool; an outside plugin does the same."""

from muninn.plugins.mcp.tools import (  # noqa: F401
    access,
    listing,
    read,
    remember,
    search,
    secrets,
    status,
    verify,
)
