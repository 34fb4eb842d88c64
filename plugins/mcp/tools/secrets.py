"""recall_secret_find, recall_secret_show, recall_secret_command: use a credential without seeing it.

They return metadata, the `use` line and a command to run; never a value. The line from
recall_secret_command runs `muninn secret exec`, which injects the value into the child and masks
its output. Every call lands in the vault's access log as `mcp:<profile>`.
"""

from __future__ import annotations

from pydantic import Field

from muninn.plugins.access.vault import Vault, exec_command_line
from muninn.plugins.mcp.registry import Output, Params, ToolSpec
from muninn.plugins.mcp.session import GuardSession

# Metadata that may leave: the vault keeps values elsewhere, this is belt and braces.
_SHOWN = ("id", "service", "environment", "kind", "username", "url", "tags", "notes", "use", "env_names",
          "exec", "last_verified", "parts")


def _vault(session: GuardSession) -> Vault:
    return Vault.open(session.settings, who=f"mcp:{session.profile.name}")


def _clean(meta: dict) -> dict:
    out = {k: meta[k] for k in _SHOWN if k in meta and k != "parts"}
    if isinstance(meta.get("parts"), dict | list):
        out["parts"] = sorted(meta["parts"])  # part names only
    return out


class FindParams(Params):
    query: str = Field(min_length=1, max_length=500, description="What the credential is for, e.g. 'token for jira'")
    limit: int = Field(5, ge=1, le=20)


def find(session: GuardSession, p: FindParams) -> Output:
    vault = _vault(session)
    try:
        hits = [_clean(h) | {"score": h.get("score")} for h in vault.find(p.query, limit=p.limit)]
    finally:
        vault.close()
    lines = [f"{h['id']}  ({h.get('service', '')}, {h.get('environment', '')}): {h.get('notes', '')}".strip()
             for h in hits]
    text = "\n".join(lines) if lines else f"No credential matches {p.query!r}."
    return Output(text + "\n\nNext: recall_secret_show ID to read its `use` line.", {"hits": hits})


class ShowParams(Params):
    id: str = Field(min_length=1, max_length=200, description="A secret id from recall_secret_find")


def show(session: GuardSession, p: ShowParams) -> Output:
    vault = _vault(session)
    try:
        meta = _clean(vault.show(p.id))
    finally:
        vault.close()
    lines = [f"{k}: {v}" for k, v in meta.items()]
    return Output("\n".join(lines) + "\n\nNext: recall_secret_command with a command that uses the "
                  "environment variable shown, then run the line it returns.", meta)


class CommandParams(Params):
    id: str = Field(min_length=1, max_length=200, description="A secret id from recall_secret_find")
    command: str = Field(min_length=1, max_length=4000, description="The command to run, using the env variable "
                         "(e.g. curl -H \"Authorization: Bearer $JIRA_API_TOKEN\" …); never the value itself")
    env: str | None = Field(None, max_length=200, description="Override the variable name")
    stdin: bool = Field(False, description="Write the value to the command's stdin instead (sudo -S)")


def command(session: GuardSession, p: CommandParams) -> Output:
    vault = _vault(session)
    try:
        vault.show(p.id)  # the id must exist: a typo should fail here, not in the agent's shell
    finally:
        vault.close()
    line = exec_command_line(p.id, p.command, env_name=p.env, stdin=p.stdin)
    return Output(f"Run this line in your shell (the value is injected and the output masked):\n{line}",
                  {"id": p.id, "command_line": line})


SECRET_FIND = ToolSpec(
    name="recall_secret_find",
    description=(
        "Find a credential by what it is for ('token for jira', 'sudo on the VMs'). Credentials come "
        "only from here: never ask for a secret, never read a .env or config file for one. Returns "
        "ids and metadata, never values."
    ),
    params=FindParams, handler=find, access="none", agent_default=True,
)
SECRET_SHOW = ToolSpec(
    name="recall_secret_show",
    description=(
        "Show a credential's metadata and its `use` line (the calling convention: bearer header, "
        "basic auth, env variable). Never the value. Next step: recall_secret_command."
    ),
    params=ShowParams, handler=show, access="none", agent_default=True,
)
SECRET_COMMAND = ToolSpec(
    name="recall_secret_command",
    description=(
        "Get the one line to run a command with a credential injected: `muninn secret exec ID -- CMD`. "
        "Write the command with the environment variable ($JIRA_API_TOKEN), never the value; the "
        "value goes into the child process only and its output is masked. Run the returned line yourself."
    ),
    params=CommandParams, handler=command, access="none", agent_default=True,
)
