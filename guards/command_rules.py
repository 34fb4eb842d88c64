"""Per-tool read-only rules for the command guard. Each rule takes the words after the tool name
and returns None (read-only) or one sentence saying what is wrong.

The rules are allow-lists: a sub-command is let through only when it is known to read. Write
verbs are matched first so the refusal names them (`kubectl delete writes`), and anything the
rule does not know is refused.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

# --- kubectl ------------------------------------------------------------------------------
_KUBECTL_VALUE_FLAGS = {"--context", "-n", "--namespace", "--kubeconfig", "--cluster", "--user", "-s", "--server",
                        "--request-timeout", "-o", "--output", "-l", "--selector", "--field-selector", "--as",
                        "--as-group", "--token", "--certificate-authority", "--client-certificate",
                        "--client-key", "--tls-server-name", "--sort-by", "--chunk-size", "-L", "--label-columns",
                        "--template", "--subresource", "--cache-dir"}
_KUBECTL_READ = {"get", "describe", "version", "api-resources", "api-versions", "explain", "top"}
_KUBECTL_WRITE = {"delete", "apply", "create", "patch", "edit", "replace", "scale", "rollout", "label", "annotate",
                  "set", "cordon", "uncordon", "drain", "taint", "exec", "cp", "port-forward", "run", "expose",
                  "autoscale", "debug", "attach", "proxy", "certificate", "kustomize", "plugin", "wait", "events"}
_KUBECTL_NEVER = {"-w", "--watch", "--watch-only", "--raw", "-f", "--filename", "-k", "--kustomize", "-i", "--stdin"}


def _positionals(args: list[str], value_flags: set[str]) -> tuple[list[str], list[str]]:
    """(positional words, flag names) with the values of value-taking flags skipped."""
    pos: list[str] = []
    flags: list[str] = []
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        if word.startswith("-") and word != "-":
            name = word.split("=", 1)[0]
            flags.append(name)
            if name in value_flags and "=" not in word:
                skip = True
            continue
        pos.append(word)
    return pos, flags


def kubectl(args: list[str]) -> str | None:
    pos, flags = _positionals(args, _KUBECTL_VALUE_FLAGS)
    if not pos:
        return "no sub-command"
    bad = [f for f in flags if f in _KUBECTL_NEVER]
    if bad:
        return f"{bad[0]} is refused in a proof command (watches, raw credentials or files)"
    verb = pos[0]
    if verb in _KUBECTL_WRITE:
        return f"kubectl {verb} writes or opens a session"
    if verb == "auth":
        return None if pos[1:2] in (["can-i"], ["whoami"]) else f"only `auth can-i`/`auth whoami`, not {pos[1:2]}"
    if verb == "config":
        sub = pos[1:2]
        if sub in (["current-context"], ["get-contexts"], ["get-clusters"], ["view"]):
            return None
        return f"kubectl config {' '.join(sub)} changes the kubeconfig (use --context on the command instead)"
    if verb == "cluster-info":
        return None if len(pos) == 1 else "only plain `kubectl cluster-info` (dump writes files)"
    if verb not in _KUBECTL_READ:
        return f"kubectl {verb} is not on the read-only list {sorted(_KUBECTL_READ)}"
    if verb == "get" and any(p.split("/")[0] in ("secret", "secrets") for p in pos[1:]) and (
            "-o" in flags or "--output" in flags):
        return "printing secret objects with -o would put their values in the output"
    return None


# --- aws ----------------------------------------------------------------------------------
_AWS_VALUE_FLAGS = {"--profile", "--region", "--output", "--query", "--endpoint-url", "--cli-read-timeout",
                    "--cli-connect-timeout", "--color", "--ca-bundle"}
_AWS_WRITE = re.compile(r"^(create|delete|put|update|modify|start|stop|terminate|run|attach|detach|associate|"
                        r"disassociate|tag|untag|invoke|reboot|restore|copy|import|enable|disable|register|"
                        r"deregister|set|send|publish|reset|revoke|authorize|cancel|upload|remove|add|replace)")
_AWS_S3_WRITE = {"cp", "mv", "rm", "sync", "mb", "rb", "presign", "website"}
# Read verbs that would print a credential or mint one: read-only, but the output is a leak.
_AWS_LEAKY = {"get-object", "get-object-torrent",
              "get-secret-value", "get-login-password", "get-login", "get-authorization-token", "get-session-token",
              "assume-role", "get-federation-token", "get-password-data", "get-credentials-for-identity"}


def aws(args: list[str]) -> str | None:
    pos, flags = _positionals(args, _AWS_VALUE_FLAGS)
    if len(pos) < 2:
        return "expected `aws SERVICE OPERATION`"
    service, op = pos[0], pos[1]
    if service == "s3":
        if op in _AWS_S3_WRITE:
            return f"aws s3 {op} writes"
        return None if op == "ls" else f"only `aws s3 ls`, not {op}"
    if op in _AWS_LEAKY or (op in ("get-parameter", "get-parameters", "get-parameters-by-path")
                            and "--with-decryption" in flags):
        return f"aws {service} {op} would print or mint a credential, or write a local file"
    if _AWS_WRITE.match(op):
        return f"aws {service} {op} writes"
    if service == "configure":
        return None if op == "list" else "aws configure writes the CLI config"
    if service == "sso" and op == "login":
        return "aws sso login is interactive"
    if not re.match(r"^(get|list|describe|head)-", op):
        return f"aws {service} {op} is not a get-/list-/describe- operation"
    return None


# --- az / gcloud / helm -------------------------------------------------------------------
_AZ_VALUE_FLAGS = {"--subscription", "-o", "--output", "--query", "-g", "--resource-group", "-n", "--name"}


def az(args: list[str]) -> str | None:
    pos, _ = _positionals(args, _AZ_VALUE_FLAGS)
    if not pos:
        return "no command"
    if pos == ["version"]:
        return None
    verb = pos[-1]
    if pos[:2] == ["account", "get-access-token"]:
        return "az account get-access-token prints a credential"
    if verb in ("show", "list", "list-locations"):
        return None
    return f"az {' '.join(pos)} is not a show/list command (az account set changes global state)"


def gcloud(args: list[str]) -> str | None:
    pos, _ = _positionals(args, {"--project", "--format", "--account", "--filter", "--configuration"})
    if pos[:2] in (["auth", "list"], ["config", "list"]) or pos == ["version"]:
        return None
    if pos[:1] == ["auth"]:
        return "gcloud auth other than `list` prints or changes credentials"
    verbs = [i for i, word in enumerate(pos) if word in ("list", "describe")]
    # Groups come first (`container clusters`), then the verb, then its resource name.
    if verbs and len(pos) - verbs[0] <= 2:
        return None
    return f"gcloud {' '.join(pos)} is not a list/describe command"


def helm(args: list[str]) -> str | None:
    pos, _ = _positionals(args, {"--kube-context", "-n", "--namespace", "--kubeconfig", "-o", "--output"})
    if pos[:1] in (["list"], ["ls"], ["status"], ["version"], ["history"]):
        return None
    return f"helm {' '.join(pos[:1])} is not list/status/history/version"


# --- curl ---------------------------------------------------------------------------------
# Short options that take an argument (the rest of the word, or the next word).
_CURL_SHORT_ARG = set("AbcCdDeEFHKmoPQrtTuUwxXyYz")
_CURL_LONG_ARG = {"--request", "--header", "--user", "--user-agent", "--referer", "--cookie", "--cookie-jar",
                  "--dump-header", "--config", "--max-time", "--output", "--proxy", "--write-out", "--connect-timeout",
                  "--data", "--data-raw", "--data-binary", "--data-ascii", "--data-urlencode", "--form",
                  "--form-string", "--upload-file", "--json", "--url", "--cacert", "--cert", "--key", "--retry",
                  "--resolve", "--connect-to", "--trace", "--trace-ascii", "--stderr", "--quote", "--oauth2-bearer",
                  "--range", "--limit-rate", "--output-dir", "--unix-socket", "--interface", "--aws-sigv4",
                  "--variable", "--expand-url", "--netrc-file", "--etag-save", "--hsts", "--alt-svc",
                  "--libcurl", "--krb", "--proto", "--proto-redir", "--url-query"}
_CURL_BODY = {"-d", "--data", "--data-raw", "--data-binary", "--data-ascii", "--data-urlencode", "-F", "--form",
              "--form-string", "-T", "--upload-file", "--json"}
# Flags whose argument is a file curl writes (or reads options from): allowed only towards /dev/null or stdout.
_CURL_FILES = {"-o", "--output", "-c", "--cookie-jar", "-D", "--dump-header", "--trace", "--trace-ascii",
               "--stderr", "--libcurl", "--etag-save", "--hsts", "--alt-svc"}
_CURL_NEVER = {"-K", "--config", "-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name",
               "-Q", "--quote", "--output-dir", "--create-dirs", "--variable", "--expand-url", "-q", "--disable"}


def _curl_options(args: list[str]) -> tuple[list[tuple[str, str | None]], list[str]]:
    opts: list[tuple[str, str | None]] = []
    urls: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if name in _CURL_LONG_ARG and not eq:
                i += 1
                value = args[i] if i < len(args) else ""
            opts.append((name, value if (eq or name in _CURL_LONG_ARG) else None))
            if name == "--url":
                urls.append(value)
        elif word.startswith("-") and len(word) > 1:
            j = 1
            while j < len(word):
                ch = word[j]
                if ch in _CURL_SHORT_ARG:
                    value = word[j + 1:]
                    if not value:
                        i += 1
                        value = args[i] if i < len(args) else ""
                    opts.append((f"-{ch}", value))
                    break
                opts.append((f"-{ch}", None))
                j += 1
        else:
            urls.append(word)
        i += 1
    return opts, urls


def curl(args: list[str]) -> str | None:
    opts, urls = _curl_options(args)
    for name, value in opts:
        if name in _CURL_BODY:
            return f"{name} sends a body (a write)"
        if name in _CURL_NEVER:
            return f"{name} reads options from or writes files"
        if name in ("-X", "--request") and (value or "").upper() not in ("GET", "HEAD"):
            return f"method {value!r}: only GET or HEAD"
        if name in _CURL_FILES and value not in ("/dev/null", "-"):
            return f"{name} {value} writes a local file (only /dev/null or - are allowed)"
    if not urls:
        return "no URL"
    for url in urls:
        scheme = urlsplit(url if "://" in url else f"http://{url}").scheme.lower()
        if scheme not in ("http", "https"):
            return f"scheme {scheme!r}: only http and https"
    return None


# --- ssh / sudo ---------------------------------------------------------------------------
_SSH_VALUE_FLAGS = set("bcEeFiJlmOopQSw")
_SSH_NEVER = set("fNWLRDwMS")
_SSH_BAD_OPTIONS = ("proxycommand", "localcommand", "permitlocalcommand", "remotecommand", "knownhostscommand",
                    "localforward", "remoteforward", "dynamicforward", "controlmaster", "controlpath")
# Remote commands `ssh HOST ...` may run: the words, then the flags allowed after them.
REMOTE_READ: dict[tuple[str, ...], set[str]] = {
    ("hostname",): {"-f", "-s"}, ("true",): set(), ("uptime",): set(), ("whoami",): set(), ("id",): {"-u", "-un"},
    ("uname",): {"-a", "-r", "-n"}, ("df",): {"-h", "-P"}, ("zpool", "status"): {"-x", "-v"},
    ("zpool", "list"): {"-H"}, ("cat", "/etc/os-release"): set(), ("systemctl", "is-active"): {"<unit>"},
}
_UNIT = re.compile(r"^[A-Za-z0-9@._-]+$")


def remote(words: list[str]) -> str | None:
    for prefix, flags in REMOTE_READ.items():
        if tuple(words[:len(prefix)]) != prefix:
            continue
        rest = words[len(prefix):]
        if "<unit>" in flags:
            return None if len(rest) == 1 and _UNIT.match(rest[0]) else "systemctl is-active takes one unit"
        bad = [w for w in rest if w not in flags]
        return f"{' '.join(prefix)} does not take {bad}" if bad else None
    shown = sorted(" ".join(p) for p in REMOTE_READ)
    return f"remote command {' '.join(words)!r} is not one of {shown}"


def ssh_split(args: list[str]) -> tuple[str | None, list[str]]:
    """(host, remote words). A refusal comes back as host '!reason'."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        word = args[i]
        for j, ch in enumerate(word[1:], start=1):
            if ch in _SSH_NEVER:
                return f"!-{ch} forwards, multiplexes or runs in the background", []
            if ch in _SSH_VALUE_FLAGS:
                value = word[j + 1:] or (args[i + 1] if i + 1 < len(args) else "")
                if not word[j + 1:]:
                    i += 1
                if ch == "o" and re.split(r"[=\s]", value.strip().lower())[0] in _SSH_BAD_OPTIONS:
                    return f"!-o {value} runs or forwards something", []
                break
        i += 1
    if i >= len(args):
        return None, []
    return args[i], args[i + 1:]


_SUDO_OK_FLAGS = {"-k", "-S", "-n", "-l", "-K"}


def sudo(args: list[str]) -> str | None:
    rest = list(args)
    flags: list[str] = []
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag == "-p":
            if not rest:
                return "-p without a prompt"
            rest.pop(0)
            continue
        if flag not in _SUDO_OK_FLAGS:
            return f"sudo {flag} is not allowed (only -k, -S, -n, -p, -l)"
        flags.append(flag)
    if rest == ["true"] or (not rest and "-l" in flags) or (not rest and "-K" in flags):
        return None
    return f"sudo may only run `true` (e.g. `sudo -k true`), not {' '.join(rest) or 'a shell'}"


# --- small network probes -----------------------------------------------------------------
def nc(args: list[str]) -> str | None:
    pos, flags = _positionals(args, {"-w"})
    if "-z" in flags and len(pos) == 2 and all(f in ("-z", "-v", "-w") for f in flags):
        return None
    return "only `nc -z [-v] [-w N] HOST PORT`"


def ping(args: list[str]) -> str | None:
    pos, flags = _positionals(args, {"-c", "-W", "-w"})
    if "-c" in flags and len(pos) == 1 and all(f in ("-c", "-W", "-w", "-q", "-4", "-6") for f in flags):
        return None
    return "only `ping -c N HOST` (without -c it never ends)"


def getent(args: list[str]) -> str | None:
    return None if args[:1] in (["hosts"], ["ahosts"]) and len(args) == 2 else "only `getent hosts NAME`"


def lookup(args: list[str]) -> str | None:
    return None if args and all(not a.startswith("-f") for a in args) else "needs a name (and no -f batch file)"


def git(args: list[str]) -> str | None:
    return None if args[:1] == ["ls-remote"] else "only `git ls-remote`"


def passthrough_flags(args: list[str]) -> str | None:
    return None
