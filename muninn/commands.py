"""muninn's own CLI command groups, registered through the hook an outside plugin's commands use.

Named as strings, not imported: `muninn --help` lists them from the generated muninn/cli_index.py
and a part is imported only when one of its commands runs. The order is the order `muninn --help`
lists them in (the first hour first), so it is one list here rather than one per part.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from muninn.core.hookspecs import hookimpl


@hookimpl
def register_commands(register: Callable[[str, str, str | None], Any]) -> None:
    # (module, attribute, name): a sub-app whose commands sit at the top (name None) or a group named `name`.
    for module, attr, name in (
        ("muninn.plugins.stack.init_cli", "app", None),
        ("muninn.plugins.stack.cli", "app", None),
        ("muninn.plugins.stack.cli", "server_app", "server"),
        ("muninn.plugins.stack.cli", "embed_app", "embed"),
        ("muninn.plugins.stack.models_cli", "app", "models"),
        ("muninn.plugins.stack.doctor_cli", "app", None),
        ("muninn.plugins.stack.fs_cli", "app", None),
        ("muninn.plugins.stack.policy_cli", "app", "policy"),
        ("muninn.nightly.cli", "app", "nightly"),
        ("muninn.nightly.watch_cli", "app", None),
        ("muninn.nightly.observe_cli", "app", None),
        ("muninn.nightly.skills_cli", "app", "skills"),
        ("muninn.nightly.leak_cli", "app", "leak"),
        ("muninn.nightly.backup.cli", "app", "backup"),
        ("muninn.nightly.backup.key_cli", "app", "key"),
        ("muninn.evals.cli", "app", None),
        ("muninn.evals.bench_cli", "app", None),
        ("muninn.export.cli", "app", None),
        ("muninn.plugins.search.cli", "app", None),
        ("muninn.plugins.search.serve_cli", "app", None),
        ("muninn.plugins.search.outside.cli", "app", "outside"),
        ("muninn.plugins.mcp.cli", "app", None),
        ("muninn.plugins.mcp.cli", "guard_app", None),
        ("muninn.plugins.access.vault_cli", "vault_app", "vault"),
        ("muninn.plugins.access.vault_cli", "secret_app", "secret"),
        ("muninn.plugins.access.inventory_cli", "app", "access"),
        ("muninn.plugins.access.verify_cli", "app", None),
        ("muninn.plugins.mcp.memory_cli", "app", None),
        ("muninn.export.redact_cli", "app", "redact"),
        ("muninn.plugins.stack.source_cli", "app", "source"),
    ):
        register(module, attr, name)
