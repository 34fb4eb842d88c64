"""`muninn mcp` (serve one profile over stdio, print client config) and `muninn guard check`.

Exit codes of `muninn guard check`: 0 allowed, 1 denied, 2 bad policy or config (file and line named).
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from muninn.core import cliutil, registry
from muninn.core import policy as policy_mod
from muninn.core.errors import ConfigError, ExitCode
from muninn.guards.policy import tools as tool_guard
from muninn.plugins.mcp import rules

app = typer.Typer(
    name="mcp", invoke_without_command=True, no_args_is_help=False,
    help="The guarded MCP server an agent talks to over stdio, one process per reader (profile) in "
    "policy.yaml.\n\n\b\n  muninn mcp --profile raven\n\n"
    "It lists only the profile's tools, checks every URI after canonicalising it, refuses "
    "observations dated after now, labels agent-written text as untrusted, redacts every known "
    "secret value from results, and writes one audit line per call. `muninn mcp config` prints the "
    "client snippet and the rules for the agent's instructions file.",
)
guard_app = typer.Typer(name="guard", no_args_is_help=True,
                        help="Ask the guard for a decision without starting a server (dry runs, scripts).")

PolicyOpt = typer.Option(None, "--policy", help="policy.yaml to enforce (default: guard.policy in muninn.yaml, "
                         "else <XDG config>/muninn/policy.yaml).")


class ClientKind(StrEnum):
    claude = "claude"
    codex = "codex"
    generic = "generic"


def _use_config(ctx: typer.Context, config: Path | None) -> None:
    if config is not None:
        root = ctx.find_root()
        root.obj = {**(root.obj or {}), "config_path": config}
        root.obj.pop("settings", None)


@app.callback()
def serve(
    ctx: typer.Context,
    profile: str = typer.Option(None, "--profile", "-p", help="The reader (profile) in policy.yaml to act as."),
    config: Path = typer.Option(None, "--config", "-c", help="muninn.yaml to use (same as `muninn --config`)."),
    policy: Path = PolicyOpt,
    http: int = typer.Option(None, "--http", min=1, max=65535,
                             help="Serve streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio (loopback only)."),
) -> None:
    if ctx.invoked_subcommand is not None:
        return
    if not profile:
        raise typer.BadParameter("--profile is required to serve (see policy.yaml's readers)")
    import anyio

    from muninn.plugins.mcp import server
    from muninn.plugins.mcp.session import GuardSession

    _use_config(ctx, config)
    session = GuardSession.open(cliutil.settings(ctx), profile, policy)
    try:
        session.refresh_index()   # incremental: only files changed since the last walk are read
        session.warm_up_in_background()   # reranker and index loaded while the client initialises
        if http:
            cliutil.say(f"muninn mcp: profile {profile!r} on http://127.0.0.1:{http}/mcp")
            anyio.run(server.serve_http, session, http)
        else:
            anyio.run(server.serve_stdio, session)
    finally:
        session.close()


@app.command("config")
def config_cmd(
    ctx: typer.Context,
    client: ClientKind = typer.Option(ClientKind.generic, "--client", help="Which client's config format."),
    profile: str = typer.Option(None, "--profile", "-p", help="The reader in policy.yaml the client runs as "
                                "(default: for claude and codex the policy's only assistant reader, as `mcp "
                                "install` writes; for generic its only agent reader)."),
    policy: Path = PolicyOpt,
    show_rules: bool = typer.Option(False, "--rules", help="Print the rules block for the agent's instructions "
                                    "file (CLAUDE.md, AGENTS.md) instead of the snippet."),
) -> None:
    """Print the MCP client snippet for `muninn mcp --profile NAME` on stdout, alone, so it can be
    redirected into a file; `--rules` prints the rules block generated from the profile's tools.
    For --client claude the `claude mcp add ...` line goes to stderr. Exit 2 when the profile is
    not in the policy."""
    s = cliutil.settings(ctx)
    pol = policy_mod.load_for(s, policy)
    prof = _reader(pol, profile, client.value)
    if show_rules:
        typer.echo(rules.rules_block(prof.tools), nl=False)
        return
    env = rules.server_env(cliutil.config_path(ctx) or s.source_file, s.keyring.backend)
    typer.echo(rules.client_config(client.value, prof.name, env, policy))
    cliutil.say(_runs_as(prof))
    if client == ClientKind.claude:
        cliutil.say("or: " + rules.claude_add_line(prof.name, env, policy))


# The reader kind a client runs as when --profile is not given, the same in `mcp config` and `mcp install`:
# Claude Code and Codex are coding-assistant sessions; any other client is taken for the local agent.
CLIENT_KIND = {"claude": "assistant", "codex": "assistant", "generic": "agent"}


def _reader(pol: policy_mod.Policy, name: str | None, client: str) -> policy_mod.Profile:
    """`name`, else the policy's only reader of the client's kind (CLIENT_KIND); an assistant client
    whose policy has no assistant reader gets the only agent reader, the narrower one. Exit 2 naming the
    readers otherwise."""
    if name is None:
        kinds = [CLIENT_KIND[client], *(["agent"] if CLIENT_KIND[client] == "assistant" else [])]
        for kind in kinds:
            found = [p.name for p in pol.profiles.values() if p.kind == kind]
            if found:
                break
        if len(found) != 1:
            raise ConfigError(f"name the reader with --profile (readers in the policy: "
                              f"{', '.join(sorted(pol.profiles)) or 'none'})", path=str(pol.path))
        name = found[0]
    return pol.profile(name)   # a profile the policy lacks: exit 2, naming the ones it has


def _runs_as(prof: policy_mod.Profile) -> str:
    """One line on stderr: which reader the client acts as and what it may write, labelled how."""
    writes = sorted(a for a, lv in prof.areas.items() if lv in ("write", "manage"))
    label = "trusted" if prof.trusted else "labelled untrusted for every other reader"
    where = f"writes into {', '.join(writes)} ({label})" if writes else "writes nothing"
    return f"reader {prof.name!r} ({prof.kind}): {where}; --profile NAME for another reader"


class Scope(StrEnum):
    user = "user"
    project = "project"


class InstallClient(StrEnum):
    claude = "claude"
    codex = "codex"


@app.command("install")
def install_cmd(
    ctx: typer.Context,
    client: InstallClient = typer.Option(..., "--client", help="The client whose own config files are changed "
                                         "(codex: the MCP server only, no hooks)."),
    profile: str = typer.Option(None, "--profile", "-p", help="The reader the client's sessions act as (default: "
                                "the policy's only assistant reader). Never an owner."),
    scope: Scope = typer.Option(Scope.user, "--scope", help="user: ~/.claude.json (every project); project: "
                                ".mcp.json in --project (shared through the repository)."),
    project: Path = typer.Option(Path("."), "--project", help="With --scope project: the project's root."),
    policy: Path = PolicyOpt,
    uninstall: bool = typer.Option(False, "--uninstall", help="Take muninn's entries out again; everything else "
                                   "in each file stays as it was."),
    record: bool = typer.Option(None, "--record/--no-record", help="Add (or remove) the `muninn observe` hook that "
                                "records every tool call's input and output, redacted, in the observation log, "
                                "synced to the OpenViking server when a session ends. Default: what the last "
                                "install chose, off on a first install. Claude Code only."),
    recall_before_risky: bool = typer.Option(None, "--recall-before-risky/--no-recall-before-risky",
                                             help="Add (or remove) a PreToolUse hook that, before a risky Bash "
                                             "command (a write, delete, restart, deploy or credential change), "
                                             "hands the agent what memory holds about past attempts at it, "
                                             "searched as the same reader, labelled untrusted; it never blocks. "
                                             "Default: what the last install chose, on for a first install. "
                                             "Claude Code only."),
) -> None:
    """Connect Claude Code to muninn by writing into Claude Code's own files, keeping everything else
    they hold: the `muninn` entry of `mcpServers` in ~/.claude.json (or a project's .mcp.json), and the
    /recall command (~/.claude/commands/recall.md), which searches as the same reader. The reader is the
    one `mcp config --client claude` prints (the policy's only assistant reader unless --profile).

    Recording is a choice: only with `--record` does the `muninn observe` hook for PostToolUse and
    SessionEnd go into ~/.claude/settings.json, and then every tool call's input and output (file
    contents, command output), redacted and capped, goes into the observation log, synced to the
    OpenViking server when the session ends. A first install records nothing; a later one keeps what
    the last chose; `--no-record` takes the hook out.

    Run it again after moving muninn or its config; `--uninstall` removes exactly what it added. Prints
    each file and what changed. Exit 2 when a file is not valid JSON (named; nothing written) or the
    reader is an owner.

    `--client codex`: the `muninn` server in $CODEX_HOME/config.toml (default ~/.codex; with --scope
    project, the project's .codex/config.toml), as one marked block, and the same /recall prompt as a Codex
    custom prompt ($CODEX_HOME/prompts/recall.md, run as /prompts:recall); Codex gets no hooks (docs/mcp.md
    says why). Exit 2 when the file is not valid TOML or holds a `muninn` server muninn did
    not write.
    """
    from muninn.plugins.mcp import client_install as inst

    if client == InstallClient.codex:
        if recall_before_risky:
            raise typer.BadParameter("Codex has no hooks (--recall-before-risky is Claude Code's)",
                                     param_hint="--recall-before-risky")
        if record:
            raise typer.BadParameter("Codex has no hooks: nothing can be recorded (--record is Claude Code's)",
                                     param_hint="--record")
        _install_codex(ctx, profile, scope, project, policy, uninstall)
        return
    where = inst.Plan(person=Path.home(), project=project.expanduser().absolute() if scope == Scope.project else None)
    for path, objects in ((where.servers_file, inst.SERVERS), (where.settings_file, inst.HOOKS)):
        inst.checked(path, objects)   # every file first: none is changed when another is broken
    if uninstall:
        changes = [inst.edit_json(where.servers_file, inst.drop_server, inst.SERVERS),
                   inst.edit_json(where.settings_file, inst.together(inst.drop_hooks, inst.drop_risky_hook),
                                  inst.HOOKS),
                   inst.remove_command(where.command_file)]
    else:
        s, prof = _assistant(ctx, profile, policy, client.value)
        env = rules.server_env(cliutil.config_path(ctx) or s.source_file, s.keyring.backend)
        args = ["mcp", "--profile", prof.name]
        if policy is not None:
            args += ["--policy", str(policy.expanduser().absolute())]
        entry = inst.server_entry(rules.command(), args, env)
        if record is None:   # keep the last install's choice; a first install records nothing
            record = inst.has_hooks(inst.checked(where.settings_file, inst.HOOKS))
        if recall_before_risky is None:   # keep the last install's choice; a first install recalls
            installed = inst.has_server(inst.checked(where.servers_file, inst.SERVERS))
            recall_before_risky = not installed or inst.has_risky_hook(inst.checked(where.settings_file, inst.HOOKS))
        observe = inst.shell_line(env, [*rules.command(), "observe"])
        hooks = inst.set_hooks(observe) if record else inst.drop_hooks
        risky = inst.drop_risky_hook
        if recall_before_risky:
            risky = inst.set_risky_hook(inst.risky_line(env, str(Path(sys.executable).absolute()), prof.name,
                                                        policy.expanduser().absolute() if policy else None))
        changes = [inst.edit_json(where.servers_file, inst.set_server(entry), inst.SERVERS),
                   inst.edit_json(where.settings_file, inst.together(hooks, risky), inst.HOOKS),
                   inst.write_command(where.command_file, prof.name)]
    for c in changes:
        typer.echo(f"{c.path}: {c.what}")
    if not uninstall:
        cliutil.say(_runs_as(prof))
        cliutil.say(RECORDING if record else NOT_RECORDING)
        cliutil.say(RECALLING if recall_before_risky else NOT_RECALLING)


RECORDING = ("recording: every tool call's input and output (file contents, command output) goes, redacted, "
             "into the observation log and is synced to the OpenViking server when a session ends; "
             "`--no-record` stops it")
NOT_RECORDING = ("not recording tool calls: `--record` adds the `muninn observe` hook, which keeps every tool "
                 "call's input and output, redacted, in the observation log, synced when a session ends")


RECALLING = ("before a risky Bash command (write, delete, restart, deploy, credential change) the agent is "
             "handed what memory holds about past attempts at it, as the same reader, labelled untrusted; it never "
             "blocks; `--no-recall-before-risky` takes the hook out")
NOT_RECALLING = ("not recalling before risky commands: `--recall-before-risky` adds a hook that hands the agent "
                 "past attempts at a risky command before it runs")


def _assistant(ctx: typer.Context, profile: str | None, policy: Path | None, client: str) -> tuple[Any, Any]:
    """The settings and the reader a client's sessions act as (as `mcp config` picks it): never an owner."""
    s = cliutil.settings(ctx)
    pol = policy_mod.load_for(s, policy)
    prof = _reader(pol, profile, client)
    if prof.kind == "owner":
        raise ConfigError(f"reader {prof.name!r} is an owner: an assistant's sessions must not act as the owner",
                          path=str(pol.path), fix="pass --profile with an assistant or agent reader")
    return s, prof


def _install_codex(ctx: typer.Context, profile: str | None, scope: Scope, project: Path, policy: Path | None,
                   uninstall: bool) -> None:
    from muninn.plugins.mcp import codex_install

    path = (project.expanduser().absolute() / ".codex" / "config.toml" if scope == Scope.project
            else codex_install.config_file(Path.home()))
    from muninn.plugins.mcp import client_install as inst

    # Codex's custom prompts are the person's, in $CODEX_HOME/prompts, whatever the server's scope.
    prompt = codex_install.config_file(Path.home()).parent / "prompts" / "recall.md"
    if uninstall:
        changes = [codex_install.uninstall(path), inst.remove_command(prompt)]
    else:
        s, prof = _assistant(ctx, profile, policy, "codex")
        env = rules.server_env(cliutil.config_path(ctx) or s.source_file, s.keyring.backend)
        changes = [codex_install.install(path, rules.client_config("codex", prof.name, env, policy)),
                   inst.write_command(prompt, prof.name, "codex")]
    for change in changes:
        typer.echo(f"{change.path}: {change.what}")
    if not uninstall:
        cliutil.say(_runs_as(prof))


@guard_app.command("check")
def check_cmd(
    ctx: typer.Context,
    tool: str = typer.Argument(..., help="A tool name: a recall_* tool, or an OpenViking one to see it refused."),
    uri: str = typer.Argument(None, help="A viking:// URI the call would touch (checked after canonicalising)."),
    profile: str = typer.Option(..., "--profile", "-p", help="The reader in policy.yaml."),
    policy: Path = PolicyOpt,
    json_out: bool = cliutil.JsonOpt,
) -> None:
    """Print allow or deny and the reason, exactly as the MCP server would decide. Exit 0 allow, 1 deny."""

    pol = policy_mod.load_for(cliutil.settings(ctx), policy)
    prof = pol.profile(profile)
    decision = tool_guard.check_call(prof, tool, uri)
    if json_out:
        cliutil.emit_json({"profile": profile, "tool": tool, "uri": uri, "decision": decision.word,
                           "reason": decision.reason, "canonical_uri": decision.canonical_uri,
                           "access": registry.tool_access().get(tool)})
    else:
        typer.echo(f"{decision.word}: {decision.reason}")
    raise typer.Exit(ExitCode.OK if decision.allowed else ExitCode.CHECK_FAILED)
