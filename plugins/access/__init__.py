"""The vault: secrets YAML in, an AES-GCM store out; find, show, exec with masking, an access log.

The public API is `muninn.plugins.vault.api` (`Vault`, `exec_command_line`).
"""
