"""Which secret values muninn knows, and the forms a value can take: the collectors (one path:
`secret_values` reads the sources, `setting_values` filters a setting's value by its key,
`config_secrets` reads the settings inside a config file), the forms table and its byte dumps, and the
ledger of retired values. The redactor, the leak gate and exec masking all read this room."""
