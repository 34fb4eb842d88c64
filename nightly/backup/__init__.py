"""Backups and keys: what cannot be rebuilt, kept, sealed, checked and put back, and the keys that open it.

make (create, list, retention) gathers server files (server) and local parts (parts) into one archive
(archive), sealed with the backup key (crypt); restore puts it back through the restore gate (gate);
verify is the restore drill; cli is `muninn backup`; key_cli and key_transfer are `muninn key` (a
reader's key moved between hosts, sealed in crypt's key-file format).
"""
