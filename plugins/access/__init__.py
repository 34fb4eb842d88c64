"""Access: the vault, the inventory and the verify sweep, as one feature.

    store.py        the encrypted vault store (AES-GCM, key in the keyring)
    catalog.py      find/score, shared by `secret find` and `access find`
    injection.py    open the vault, inject, expand $VAR, run masked: the one way every caller runs a child
    runner.py       the child process and the masking pumps
    prereq.py       prerequisites (a TCP connect to the VPN...)
    steps.py        an inventory entry's access steps, as one bash script
    sweep.py        `muninn verify`; classify.py turns output into a status; results.py stores it
    access_log.py   one JSON line per find, show, get, exec, verify
    vault.py        `Vault`, the front door of `vault` and `secret`
    inventory.py    `Inventory`, the front door of `access`
"""
