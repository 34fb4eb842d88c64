"""The MCP tool contract: names, parameters and annotations are what agents' instructions files and
audit logs rely on. Change them only together with a migration note."""

from __future__ import annotations

from muninn.core.registry import tool_access
from muninn.plugins.mcp import registry


def test_tool_contract_is_pinned() -> None:
    specs = registry.all_tools()
    contract = {
        name: (sorted(spec.input_schema().get("properties", {})), sorted(spec.input_schema().get("required", [])),
               spec.annotations.read_only_hint, spec.annotations.destructive_hint, spec.annotations.idempotent_hint)
        for name, spec in specs.items()
    }
    assert contract == {
        "recall_search": (["briefing", "k", "only", "query", "since", "target", "tokens"], ["query"], True, False,
                          True),
        "recall_read": (["max_chars", "uri"], ["uri"], True, False, True),
        "recall_list": (["uri"], [], True, False, True),
        "recall_remember": (["kind", "observed_at", "tags", "text", "title"], ["text"], False, False, False),
        "recall_status": ([], [], True, False, True),
        "recall_secret_find": (["limit", "query"], ["query"], True, False, True),
        "recall_secret_show": (["id"], ["id"], True, False, True),
        "recall_secret_command": (["command", "env", "id", "stdin"], ["command", "id"], True, False, True),
        "recall_access_find": (["limit", "query"], ["query"], True, False, True),
        "recall_access_show": (["id"], ["id"], True, False, True),
        "recall_access_exec": (["command", "id", "stdin_secret", "timeout"], ["command", "id"], False, True, False),
        "recall_verify": (["dry_run", "ids"], [], True, False, True),
    }
    assert set(specs) == set(tool_access())


def test_every_tool_schema_is_a_closed_object() -> None:
    for name, spec in registry.all_tools().items():
        schema = spec.input_schema()
        assert schema["type"] == "object", name
        assert schema.get("additionalProperties") is False, name


def test_every_description_teaches_something() -> None:
    for name, spec in registry.all_tools().items():
        assert len(spec.description) > 60, name


def test_each_tools_access_is_pinned_on_its_spec() -> None:
    """What a tool does to the tree decides which prefixes the guard checks its URI against."""
    assert tool_access() == {
        "recall_search": "read", "recall_read": "read", "recall_list": "read", "recall_remember": "write",
        "recall_secret_find": "none", "recall_secret_show": "none", "recall_secret_command": "none",
        "recall_access_find": "none", "recall_access_show": "none", "recall_access_exec": "none",
        "recall_verify": "none", "recall_status": "none",
    }
