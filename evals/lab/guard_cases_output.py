"""Two generated classes of the verify guard's cases (shared by tests/test_command_guard_output.py and
evals/security_guard.py): output-shaping options whose expression selects a secret-ish field, and
method overrides that turn a GET into a write. Each class comes with the ordinary cases of the same
shapes, which must stay allowed (their refusals are false refusals)."""

from __future__ import annotations

import itertools

# Secret-ish fields, as words; each is spelled every way field names are written.
SECRET_FIELDS = [
    ("password",), ("passwd",), ("pwd",), ("passphrase",), ("secret",), ("secrets",), ("token",), ("credential",),
    ("credentials",), ("creds",), ("private", "key"), ("api", "key"), ("access", "key"), ("secret", "access", "key"),
    ("client", "secret"), ("client", "key"), ("auth", "token"), ("access", "token"), ("refresh", "token"),
    ("id", "token"), ("session", "token"), ("private", "key", "data"), ("key", "data"), ("master", "auth"),
    ("bearer", "token"), ("sas", "token"), ("connection", "string"), ("proxy", "password"), ("cookie",),
    ("signing", "key"), ("encryption", "key"), ("storage", "key"), ("primary", "key"), ("pass", "word"),
]
# Ordinary fields of the same reads: what proofs print.
PLAIN_FIELDS = [
    ("name",), ("status",), ("account",), ("project",), ("region",), ("zone",), ("id",), ("arn",), ("user", "id"),
    ("state",), ("tenant", "id"), ("is", "default"), ("creation", "timestamp"), ("kubelet", "version"),
    ("pod", "cidr"), ("instance", "id"), ("instance", "type"), ("key", "name"), ("public", "ip", "address"),
    ("private", "ip", "address"), ("image", "id"), ("subscription", "id"), ("display", "name"), ("version",),
    ("endpoint",), ("node", "pool"), ("labels",), ("tags",), ("value",), ("key",), ("type",), ("ready",),
    ("capacity",), ("allocatable",), ("os", "image"), ("architecture",), ("location",), ("sku",),
    ("provisioning", "state"), ("current", "context"), ("network",), ("vpc", "id"), ("cluster", "name"),
    ("passed",), ("bypass", "list"), ("authorized", "networks"), ("monkey",), ("keyspace",),
]


def spellings(words: tuple[str, ...]) -> list[str]:
    """camelCase, PascalCase, snake_case, kebab-case, UPPER_SNAKE, one word, Title, UPPER."""
    lower = [w.lower() for w in words]
    camel = lower[0] + "".join(w.title() for w in lower[1:])
    forms = [camel, camel[0].upper() + camel[1:], "_".join(lower), "-".join(lower), "_".join(lower).upper(),
             "".join(lower)]
    if len(words) == 1:
        forms += [lower[0].title(), lower[0].upper()]
    return list(dict.fromkeys(forms))


def _paths(name: str) -> list[str]:
    return [name, f"proxy.{name}", f"spec.{name}", f"data.{name}"]


def _shaping(field: str) -> list[str]:
    """The output-shaping options of every tool that has one, selecting `field`."""
    path = field
    return [
        f"gcloud config list --format 'value({path})'",
        f"gcloud config list --format 'table(name,{path})'",
        f"gcloud config list --format='json({path})'",
        f"gcloud auth list --format \"csv({path})\"",
        f"gcloud config configurations list --filter '{path}:x'",
        f"gcloud projects describe ops-prod --format 'value({path})'",
        f"kubectl get nodes -o 'jsonpath={{.items[*].{path}}}'",
        f"kubectl get nodes -o=jsonpath='{{.{path}}}'",
        f"kubectl get nodes --output 'custom-columns=NAME:.metadata.name,X:.{path}'",
        f"kubectl get ns -o 'jsonpath-as-json={{.items[0].{path}}}'",
        f"aws sts get-caller-identity --query '{path}'",
        f"aws sts get-caller-identity --query={path}",
        f"aws ec2 describe-instances --query 'Reservations[].Instances[].{path}'",
        f"az account show --query '{path}'",
        f"az account show -o tsv --query '[name,{path}]'",
    ]


def output_shaping_secret() -> list[str]:
    out = []
    for words in SECRET_FIELDS:
        for spelled in spellings(words):
            for path in _paths(spelled):
                out += _shaping(path)
    return list(dict.fromkeys(out))


def output_shaping_plain() -> list[str]:
    out = []
    for words in PLAIN_FIELDS:
        for spelled in spellings(words):
            out += _shaping(f"metadata.{spelled}") + _shaping(spelled)
    return list(dict.fromkeys(out))


OVERRIDE_HEADERS = ["X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override", "X-Original-Method", "Method",
                    "X-Http-Method-Override", "x-http-method-override", "X-HTTP-METHOD-OVERRIDE", "x-Method-override"]
WRITES = ["DELETE", "PUT", "POST", "PATCH", "delete", "Delete", "PURGE", "MOVE", "COPY", "MKCOL", "LOCK"]
_HEADER_OPTIONS = ["-H '{h}'", "-H'{h}'", "--header '{h}'", '-H "{h}"', "-sf -H '{h}'", "-I -X HEAD --header '{h}'"]
_HEADER_FORMS = ["{n}: {v}", "{n}:{v}", "{n}:  {v} ", "{n}: {v}, GET"]
_PARAMS = ["_method", "_METHOD", "_Method", "%5Fmethod", "%5fmethod", "method", "x-http-method-override",
           "X-HTTP-Method", "_%6Dethod"]


def method_override() -> list[str]:
    out = []
    for name, verb in itertools.product(OVERRIDE_HEADERS, WRITES):
        for option, form in itertools.product(_HEADER_OPTIONS, _HEADER_FORMS):
            out.append(f"curl {option.format(h=form.format(n=name, v=verb))} https://api.example.com/v1/items/7")
    for param, verb in itertools.product(_PARAMS, WRITES):
        out += [f"curl -sf 'https://api.example.com/v1/items/7?{param}={verb}'",
                f"curl -sf 'https://api.example.com/v1/items?id=7&{param}={verb}'",
                f"curl -I 'https://api.example.com/v1/items/7?{param}={verb}&a=1'"]
    # Other HTTP clients are not on the allow-list at all; their override spellings are refused with them.
    for name, verb in itertools.product(OVERRIDE_HEADERS[:3], WRITES[:4]):
        out += [f"wget -q --header='{name}: {verb}' https://api.example.com/v1/items/7",
                f"http GET https://api.example.com/v1/items/7 '{name}:{verb}'",
                f"xh https://api.example.com/v1/items/7 '{name}:{verb}'",
                f"curlie https://api.example.com/v1/items/7 '{name}:{verb}'"]
    return list(dict.fromkeys(out))


def method_plain() -> list[str]:
    out = []
    for name, verb in itertools.product(OVERRIDE_HEADERS, ["GET", "HEAD", "get"]):
        out.append(f"curl -sf -H '{name}: {verb}' https://api.example.com/v1/items/7")
    for header in ["Accept: application/json", "Authorization: Bearer $JIRA_API_TOKEN", "User-Agent: muninn-verify",
                   "X-Request-Id: verify-1", "Cache-Control: no-cache", "If-None-Match: abc", "X-Api-Version: 2"]:
        # A variable goes in double quotes, as its own word (`-H"…$VAR"` is refused, and not for its method).
        options = ["-H \"{h}\"", "--header \"{h}\""] if "$" in header else _HEADER_OPTIONS[:4]
        for option in options:
            out.append(f"curl -sf {option.format(h=header)} https://api.example.com/v1/items/7")
    for query in ["page=2", "q=method", "sort=created&order=desc", "fields=name,method", "methods=GET", "id=7"]:
        out.append(f"curl -sf 'https://api.example.com/v1/items?{query}'")
    return list(dict.fromkeys(out))
