"""What `muninn init` writes: a commented muninn.yaml, a policy.yaml with the three kinds of reader, and a
secrets template (0600) that holds metadata only.

Each text is checked by the loader that owns its format (muninn.core.config, muninn.core.policy,
muninn.core.secrets_file) before anything is written, so a template that drifted from its format fails
here and in tests, never on a user's first `muninn doctor`. Nothing existing is ever overwritten: an
existing file is named and nothing at all is written.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from muninn.core import atomic, config, policy, registry, secrets_file
from muninn.core.errors import ConfigError, Refused

POLICY_NAME = "policy.yaml"
SECRETS_NAME = "secrets.yaml"

# The area names init uses: the notes, and the assistant sessions' observation log.
NOTES_AREA = "viking://resources/notes"
SESSIONS_AREA = "viking://resources/agents/sessions"

MUNINN_YAML = """\
# muninn.yaml, written by `muninn init`. Every key and its default: docs/configuration.md.
# Relative paths are relative to this file. Credentials never live here: they are in the OS keyring.

# home: ~/.local/share/muninn        # the workspace (stack state, indexes, logs); $MUNINN_HOME overrides it

server:
  url: null                          # an external OpenViking (https://ov.example.internal:1933); null: `muninn up`
                                     # runs one on 127.0.0.1:1933
openviking:
  account: home                      # the account every reader in policy.yaml lives in
  user: owner                        # the CLI's own identity (its key goes into the keyring)

{keyring}
guard:
  policy: policy.yaml                # who reads and writes which area, with which MCP tools

vault:
  files: [secrets.yaml]              # secrets' metadata; `muninn secret add ID` puts each value in the vault

sources:                             # what `muninn export all` and `muninn sync all` read
  - {{kind: notes, path: {notes}, area: {area}, name: .}}
                                     # `name: .`: at the area's root ({area}/runbooks/…), not in a
                                     # sub-folder named by the kind
  - {{kind: observations, path: observations.jsonl, area: {sessions}, options: {{agent: your assistant}}}}
                                     # Claude Code's tool calls, one line each (`muninn observe` writes it;
                                     # `muninn mcp install --client claude --record` adds its hook)
  # - {{kind: tasks, path: tasks.db, area: viking://resources/roadmap}}
  # - {{kind: repo, path: ~/src/infra, area: viking://resources/repos, name: infra, options: {{ref: main}}}}
"""

POLICY_YAML = """\
# muninn policy, written by `muninn init`: who reads and writes which area, and with which MCP tools.
# `muninn policy apply` creates the users and ACLs from it; `muninn mcp --profile NAME` enforces it.
# Check a decision without starting anything:
#   muninn guard check --profile agent recall_remember viking://resources/agents/agent/x.md
version: 1

areas:
  notes: {area}                  # your notes (exported and synced by `muninn sync all`)
  agent: viking://resources/agents/agent      # the local agent's own area
  sessions: {sessions}   # your assistant sessions' tool calls (`muninn observe`)

# Areas whose every file is data, never instructions, for every reader: recorded tool output holds web
# pages and other people's text. Results from them come inside <untrusted-data>.
untrusted: [sessions]

readers:
  owner:                         # you: every area, every tool
    kind: owner
    account: home
    user: owner
    areas: {{notes: manage, agent: manage, sessions: manage}}
    remember_to: notes

  assistant:                     # coding-assistant sessions (Claude Code, Codex...): read all, write notes
    kind: assistant
    description: AI coding-assistant sessions
    account: home
    user: assistant
    areas: {{notes: write, agent: read, sessions: read}}
    remember_to: notes
    trusted: true                # you watch these sessions: what they write into notes reads as yours.
                                 # false: labelled untrusted for every other reader (sessions left alone)

  agent:                         # the local agent: untrusted, what it writes is labelled for every other reader
    kind: agent
    description: the local agent
    account: home
    user: agent
    areas: {{notes: read, agent: write}}
    remember_to: agent
    tools: [{agent_tools}]
"""

SECRETS_YAML = """\
# Your secrets' metadata, written by `muninn init` (mode 0600). Never the values: `muninn secret add ID`
# asks for a value without echo and puts it straight into the encrypted vault, adding the entry here.
# The vault's values are then redacted from every export, MCP result and log, and the leak gate looks for
# them. An entry (every field but `id` optional):
#
# - id: jira-api-token
#   service: jira
#   environment: prod
#   kind: token
#   username: me@example.com
#   url: https://jira.example.com
#   tags: [atlassian, api]
#   notes: Personal bearer token, rotate yearly.
#   use: 'curl -H "Authorization: Bearer $JIRA_API_TOKEN" https://jira.example.com/rest/api/2/myself'
"""


KEYRING_COMMENTED = """\
# keyring:
#   backend: keyrings.alt.file.PlaintextKeyring   # a headless host only: base64 on disk, `doctor` warns
"""
KEYRING_CHOSEN = """\
keyring:
  backend: {backend}   # $PYTHON_KEYRING_BACKEND when `muninn init` ran
"""


def keyring_block(backend: str | None) -> str:
    """The keyring section: a backend chosen by $PYTHON_KEYRING_BACKEND is written down, because the MCP
    server, a client's hooks and cron start without that shell's environment and would find no key."""
    return KEYRING_CHOSEN.format(backend=json.dumps(backend)) if backend else KEYRING_COMMENTED


@dataclass(frozen=True)
class Planned:
    path: Path
    text: str
    mode: int | None   # None: what the umask gives


def plan(config_file: Path, notes: Path, keyring_backend: str | None = None) -> list[Planned]:
    """The three files, next to each other, each text validated by its format's owner."""
    folder = config_file.parent
    texts = {
        config_file: MUNINN_YAML.format(notes=_yaml_str(notes), area=NOTES_AREA, sessions=SESSIONS_AREA,
                                        keyring=keyring_block(keyring_backend)),
        folder / POLICY_NAME: POLICY_YAML.format(area=NOTES_AREA, sessions=SESSIONS_AREA,
                                                 agent_tools=", ".join(init_agent_tools())),
        folder / SECRETS_NAME: SECRETS_YAML,
    }
    _validate(texts, config_file)
    return [Planned(path, text, 0o600 if path.name == SECRETS_NAME else None) for path, text in texts.items()]


def init_agent_tools() -> tuple[str, ...]:
    """The local agent's tools in the policy.yaml `init` writes: the registered tools whose ToolSpec says
    `init_agent` (read what it may, remember into its own area, status)."""
    return tuple(name for name, spec in registry.tools().items() if getattr(spec, "init_agent", False))


def _yaml_str(path: Path) -> str:
    # Double-quoted YAML escapes what a folder name may hold (`: `, `#`, quotes); json is a subset of YAML.
    return json.dumps(str(path))


def _validate(texts: dict[Path, str], config_file: Path) -> None:
    """Every text loads with the real loader, in a scratch folder shaped like the target."""
    with tempfile.TemporaryDirectory(prefix="muninn-init-") as tmp:
        scratch = {path: Path(tmp) / path.name for path in texts}
        for path, text in texts.items():
            scratch[path].write_text(text)
        settings = config.load(scratch[config_file], environ={})
        policy.load(settings.paths.policy)
        secrets_file.load_files([settings.paths.resolve(f) for f in settings.vault.files])


def check_notes(notes: Path) -> Path:
    path = notes.expanduser()
    if not path.is_dir():
        what = "is not a folder" if path.exists() else "does not exist"
        raise ConfigError(f"the notes folder {path.absolute()} {what}", key="--notes",
                          fix="give the folder that holds your markdown notes")
    return path.resolve()


def write(planned: list[Planned]) -> list[Path]:
    """Write every planned file, or none: an existing one is named and nothing is written. There is no
    --force: a policy or a secrets file replaced by a template loses what its owner wrote."""
    existing = [p.path for p in planned if p.path.exists() or p.path.is_symlink()]
    if existing:
        names = ", ".join(str(p) for p in existing)
        raise Refused(f"{names} already exist{'s' if len(existing) == 1 else ''}: `muninn init` never "
                      "overwrites a file and wrote nothing",
                      fix="edit the existing files, or move them aside and run `muninn init` again")
    for p in planned:
        atomic.write_text(p.path, p.text, p.mode)
    return [p.path for p in planned]

