"""The inventory: how to reach each cluster, host, account or service, with prerequisites.

The public API is `muninn.plugins.inventory.api` (`Inventory`, `access_exec`).
"""
