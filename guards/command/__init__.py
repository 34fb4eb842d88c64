"""May this proof command run? The guard (`guard.py`) reads a command as bash would (`shell_words.py`)
and judges it against one allow-list of tools, verbs and options (`argspec.py` is how a tool is
described; the list itself is in two halves: `allow_cloud.py` for the cluster and cloud CLIs,
`allow_net.py` for network probes and small local reads); `secret_fields.py` refuses an
output-shaping option that would pick a credential out of a read."""
