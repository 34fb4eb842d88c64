"""Model weights muninn downloads once and checks on every use: `muninn models fetch NAME` from the model
hub (hub.py), and the manifest of sha256 sums every fetched folder carries (manifest.py)."""
