"""The local stack and what sets it up: the server and embedding sidecar's lifecycle and probe,
`muninn init`, `muninn doctor`, `muninn policy`, `muninn ls`, the home's file modes and the
keyring-scope upgrade step. The embedding sidecar itself stays in `muninn.plugins.embed`: its
module path is on running sidecars' command lines."""
