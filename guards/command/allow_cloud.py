"""Allow-lists for the cluster and cloud CLIs: every verb a proof may use, and every option with its arity.

What is not here is refused, so a read this file does not know (a new `get-*` that prints a
credential, `kubectl get secret -o yaml`, `aws eks get-token`) is refused by default. Output
formats are limited where a format would print an object's data (kubectl `-o` is wide or name
only, so `get secrets` lists names and never values).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from muninn.guards.command.argspec import (
    INT,
    NAME,
    SWITCH,
    ArgsCheck,
    Flag,
    Parsed,
    Tool,
    Verb,
    exactly,
    matches,
    names,
    one_of,
    value,
)
from muninn.guards.command.secret_fields import no_secret_fields
from muninn.guards.command.shell_words import Word


def _no_file_values(tool: Tool, prefixes: tuple[str, ...]) -> Tool:
    """The same tool, refusing any option value the CLI would replace by a local file's content:
    aws reads `file://`, `fileb://` (and, in v1, `http(s)://`) values; az reads `@FILE` values."""
    def wrap(flag: Flag) -> Flag:
        check = flag.value
        if check is None:
            return flag

        def guarded(text: str) -> str | None:
            if text.lower().startswith(prefixes):
                return f"{text!r}: {tool.name} would read that value from a local file or URL"
            return check(text)
        return Flag(guarded, flag.text)

    def flags(given: Mapping[str, Flag]) -> dict[str, Flag]:
        return {name: wrap(flag) for name, flag in given.items()}
    return replace(tool, flags=flags(tool.flags),
                   verbs={v: replace(spec, flags=flags(spec.flags)) for v, spec in tool.verbs.items()})


# --- kubectl --------------------------------------------------------------------------------------
# Kinds a proof may list, in the spellings kubectl accepts (plural, singular, short), lower case only.
_KINDS = {
    "nodes": ("node", "no"), "pods": ("pod", "po"), "namespaces": ("namespace", "ns"),
    "services": ("service", "svc"), "deployments": ("deployment", "deploy"), "replicasets": ("replicaset", "rs"),
    "statefulsets": ("statefulset", "sts"), "daemonsets": ("daemonset", "ds"), "ingresses": ("ingress", "ing"),
    "jobs": ("job",), "cronjobs": ("cronjob", "cj"), "persistentvolumes": ("persistentvolume", "pv"),
    "persistentvolumeclaims": ("persistentvolumeclaim", "pvc"), "endpoints": ("ep",),
    "configmaps": ("configmap", "cm"), "serviceaccounts": ("serviceaccount", "sa"),
    "storageclasses": ("storageclass", "sc"), "customresourcedefinitions": ("customresourcedefinition", "crd"),
    "secrets": ("secret",), "events": ("event", "ev"),
}
GET_KINDS = frozenset(k for plural, short in _KINDS.items() for k in (plural, *short))
# describe prints a ConfigMap's data and a pod's literal env values: a smaller set.
DESCRIBE_KINDS = frozenset({"nodes", "node", "no", "namespaces", "namespace", "ns", "services", "service", "svc",
                            "ingresses", "ingress", "ing", "persistentvolumes", "pv", "storageclasses", "sc"})
# Kinds whose objects hold no credential or app data: the only ones a structured -o may print.
_PLAIN_KINDS = frozenset({"nodes", "node", "no", "namespaces", "namespace", "ns", "storageclasses", "storageclass",
                          "sc", "persistentvolumes", "persistentvolume", "pv", "customresourcedefinitions",
                          "customresourcedefinition", "crd"})
_OBJECT = matches(r"[a-z0-9][a-z0-9.-]{0,252}", "an object name")
_KUBE_OUTPUT = no_secret_fields(matches(r"wide|name|json|yaml|(?:jsonpath|jsonpath-as-json|custom-columns)"
                                        r"=[A-Za-z0-9{}\[\]*.,:@ _'\"=-]{1,300}", "an output format"))
_KUBE_HEALTH = one_of(*(f"/{p}{q}" for p in ("healthz", "readyz", "livez") for q in ("", "?verbose")), "/version")


def _kinds(given: list[Word]) -> list[str]:
    if given and "/" in given[0].text:
        return [w.text.partition("/")[0] for w in given]
    return given[0].text.split(",") if given else []


def _kubectl(p: Parsed) -> str | None:
    """get: a resource kind unless --raw (health paths only); -o json/yaml/jsonpath only for plain kinds."""
    if p.verb != ("get",):
        return None
    if "--raw" in p.options:
        return "--raw takes no resource" if p.args or len(p.options) > 1 + ("--context" in p.options) else None
    if not p.args:
        return "name a resource kind"
    formats = p.options.get("-o", []) + p.options.get("--output", [])
    plain = all(kind in _PLAIN_KINDS for kind in _kinds(p.args))
    if any(f not in ("wide", "name") for f in formats) and not plain:
        return (f"-o {formats[0]!r} would print the objects' data: structured output only for "
                f"{', '.join(sorted(k for k in _PLAIN_KINDS if len(k) > 3))}")
    return None


def _resources(kinds: frozenset[str]) -> ArgsCheck:
    def args(given: list[Word]) -> str | None:
        if not given:
            return None if kinds is GET_KINDS else "name a resource kind"
        first = given[0].text
        if "/" in first:   # kind/name, possibly several
            for word in given:
                kind, _, obj = word.text.partition("/")
                if kind not in kinds or _OBJECT(obj):
                    return f"{word.text!r} is not KIND/NAME with KIND one of the read-only kinds"
            return None
        for kind in first.split(","):
            if kind not in kinds:
                return (f"resource {kind!r} is not on the read-only list (lower case, no group suffix): "
                        f"{', '.join(sorted(kinds))}")
        for word in given[1:]:
            if _OBJECT(word.text):
                return f"{word.text!r} is not an object name"
        return None
    return args


_KUBE_GLOBAL = {"--context": value(NAME), "-n": value(NAME), "--namespace": value(NAME),
                "--request-timeout": value(matches(r"[0-9]{1,4}[smh]?", "a duration")),
                "-A": SWITCH, "--all-namespaces": SWITCH}
_KUBE_LIST = {"-o": value(_KUBE_OUTPUT), "--output": value(_KUBE_OUTPUT), "--raw": value(_KUBE_HEALTH),
              "-l": value(matches(r"[A-Za-z0-9./_=!,-]{1,200}", "a label selector")),
              "--selector": value(matches(r"[A-Za-z0-9./_=!,-]{1,200}", "a label selector")),
              "--field-selector": value(matches(r"[A-Za-z0-9./_=!,-]{1,200}", "a field selector")),
              "--no-headers": SWITCH, "--show-labels": SWITCH, "--show-kind": SWITCH, "--chunk-size": value(INT)}
_KUBE_NAME = names("name", check=NAME)
KUBECTL = Tool("kubectl", "pflag", _KUBE_GLOBAL, {
    ("get",): Verb(_KUBE_LIST, _resources(GET_KINDS)),
    ("describe",): Verb({"-l": _KUBE_LIST["-l"], "--show-events": SWITCH},
                        _resources(DESCRIBE_KINDS)),
    ("top", "nodes"): Verb({"--no-headers": SWITCH}, names("node")),
    ("top", "node"): Verb({"--no-headers": SWITCH}, names("node")),
    ("top", "pods"): Verb({"--no-headers": SWITCH}, names("pod")),
    ("top", "pod"): Verb({"--no-headers": SWITCH}, names("pod")),
    ("version",): Verb({"--client": SWITCH, "-o": value(one_of("json", "yaml"))}),
    ("api-resources",): Verb({"-o": value(one_of("wide", "name")), "--namespaced": SWITCH}),
    ("api-versions",): Verb(),
    ("cluster-info",): Verb(),
    ("auth", "can-i"): Verb({"--list": SWITCH}, names("verb", "resource",
                                                      check=matches(r"[a-z*][a-z0-9.*/-]{0,100}", "a verb or kind"))),
    ("auth", "whoami"): Verb(),
    ("config", "current-context"): Verb(),
    ("config", "get-contexts"): Verb({"--no-headers": SWITCH, "-o": value(one_of("name"))}, _KUBE_NAME),
    ("config", "get-clusters"): Verb(),
    ("explain",): Verb({}, names("kind", check=matches(r"[a-z][a-z.]{0,100}", "a kind or field path"))),
}, require=_kubectl)

# --- helm ---------------------------------------------------------------------------------------------
_HELM_LIST = {"-A": SWITCH, "--all-namespaces": SWITCH, "-a": SWITCH, "--all": SWITCH, "-q": SWITCH,
              "--short": SWITCH, "--deployed": SWITCH, "--failed": SWITCH, "--pending": SWITCH, "--max": value(INT),
              "-o": value(one_of("table", "json", "yaml"))}
HELM = Tool("helm", "pflag", {"--kube-context": value(NAME), "-n": value(NAME), "--namespace": value(NAME)}, {
    ("list",): Verb(_HELM_LIST),
    ("ls",): Verb(_HELM_LIST),
    # `status -o json` carries the release's user-supplied values: no -o there.
    ("status",): Verb({"--revision": value(INT)}, exactly(("release", NAME))),
    ("history",): Verb({"--max": value(INT), "-o": value(one_of("table", "json", "yaml"))},
                       exactly(("release", NAME))),
    ("version",): Verb({"--short": SWITCH}),
})

# --- aws ----------------------------------------------------------------------------------------------
_MAX = {"--max-items": value(INT), "--page-size": value(INT)}
AWS = Tool("aws", "argparse", {
    "--profile": value(NAME), "--region": value(NAME), "--output": value(one_of("json", "text", "table", "yaml")),
    "--no-cli-pager": SWITCH, "--no-paginate": SWITCH, "--cli-read-timeout": value(INT),
    "--cli-connect-timeout": value(INT),
    "--query": value(no_secret_fields(matches(r"[A-Za-z0-9_.\[\]*|@&,:' ()=<>!-]{1,200}", "a JMESPath query")))}, {
    ("sts", "get-caller-identity"): Verb(),
    ("s3", "ls"): Verb({"--recursive": SWITCH, "--human-readable": SWITCH, "--summarize": SWITCH,
                        "--page-size": value(INT)},
                       names("s3 url", check=matches(r"s3://[A-Za-z0-9._/-]{0,1024}", "an s3:// url"))),
    ("s3api", "list-buckets"): Verb(_MAX),
    ("s3api", "head-bucket"): Verb({"--bucket": value(NAME)}),
    ("s3api", "head-object"): Verb({"--bucket": value(NAME), "--key": value(matches(r"[A-Za-z0-9._/+=-]{1,1024}",
                                                                                       "an object key"))}),
    ("ec2", "describe-instances"): Verb({**_MAX, "--instance-ids": value(matches(r"i-[0-9a-f]{8,17}",
                                                                                 "an instance id"))}),
    ("ec2", "describe-regions"): Verb(),
    ("ec2", "describe-vpcs"): Verb(_MAX),
    ("eks", "list-clusters"): Verb(_MAX),
    ("eks", "describe-cluster"): Verb({"--name": value(NAME)}),
    ("iam", "list-account-aliases"): Verb(),
    ("iam", "get-user"): Verb({"--user-name": value(NAME)}),
    ("organizations", "describe-organization"): Verb(),
    ("configure", "list"): Verb(),
    ("configure", "list-profiles"): Verb(),
    # SecureString parameters come back encrypted without --with-decryption, which is not on this list.
    ("ssm", "get-parameter"): Verb({"--name": value(matches(r"/?[A-Za-z0-9_./-]{1,2048}", "a parameter name"))}),
    ("rds", "describe-db-instances"): Verb({**_MAX, "--db-instance-identifier": value(NAME)}),
    ("eks", "list-nodegroups"): Verb({**_MAX, "--cluster-name": value(NAME)}),
    ("elbv2", "describe-load-balancers"): Verb(_MAX),
    ("cloudformation", "describe-stacks"): Verb({"--stack-name": value(NAME)}),
    ("route53", "list-hosted-zones"): Verb(_MAX),
    ("ecr", "describe-repositories"): Verb(_MAX),
    ("secretsmanager", "list-secrets"): Verb(_MAX),
    ("kms", "list-keys"): Verb(_MAX),
    ("logs", "describe-log-groups"): Verb(_MAX),
})

# --- az / gcloud -------------------------------------------------------------------------------------
_AZ_RG = {"-g": value(NAME), "--resource-group": value(NAME)}
_AZ_NAMED = {**_AZ_RG, "-n": value(NAME), "--name": value(NAME)}
AZ = Tool("az", "argparse", {
    "--subscription": value(NAME), "-o": value(one_of("json", "jsonc", "table", "tsv", "yaml", "yamlc", "none")),
    "--output": value(one_of("json", "jsonc", "table", "tsv", "yaml", "yamlc", "none")),
    "--query": AWS.flags["--query"], "--only-show-errors": SWITCH}, {
    ("version",): Verb(),
    ("account", "show"): Verb(),
    ("account", "list"): Verb({"--all": SWITCH}),
    ("group", "list"): Verb(),
    ("group", "show"): Verb(_AZ_NAMED),
    ("aks", "list"): Verb(_AZ_RG),
    ("aks", "show"): Verb(_AZ_NAMED),
    ("vm", "list"): Verb(_AZ_RG),
    ("network", "vnet", "list"): Verb(_AZ_RG),
    ("keyvault", "list"): Verb(_AZ_RG),
    ("keyvault", "show"): Verb(_AZ_NAMED),
    ("acr", "list"): Verb(_AZ_RG),
    ("webapp", "list"): Verb(_AZ_RG),
    ("network", "public-ip", "list"): Verb(_AZ_RG),
    ("storage", "account", "list"): Verb(_AZ_RG),
    ("ad", "signed-in-user", "show"): Verb(),
})

# `--format` projects any field (`value(masterAuth.password)`): allowed only on verbs whose objects hold none,
# and never naming a secret-ish field (`config list` holds proxy/password).
_GCLOUD_FORMAT = {
    "--filter": value(no_secret_fields(matches(r"[A-Za-z0-9_.:=~<>!() -]{1,200}", "a filter"))),
    "--format": value(no_secret_fields(matches(r"(json|yaml|text|table|value|csv)(\([A-Za-z0-9_.,:() -]{0,200}\))?",
                                               "a format (json, yaml, text, table(...), value(...))")))}
GCLOUD = Tool("gcloud", "argparse", {
    "--project": value(NAME), "--account": value(NAME), "--configuration": value(NAME), "--quiet": SWITCH,
    "--verbosity": value(one_of("error", "warning", "info"))}, {
    ("auth", "list"): Verb(_GCLOUD_FORMAT),
    ("config", "list"): Verb(_GCLOUD_FORMAT),
    ("config", "configurations", "list"): Verb(_GCLOUD_FORMAT),
    # Not proxy/password and its kind: the properties that say which account and project are in use.
    ("config", "get-value"): Verb({}, exactly(("property", one_of("project", "account", "core/project",
                                                                   "core/account", "compute/region",
                                                                   "compute/zone")))),
    ("version",): Verb(_GCLOUD_FORMAT),
    ("projects", "list"): Verb({**_GCLOUD_FORMAT, "--limit": value(INT)}),
    ("projects", "describe"): Verb(_GCLOUD_FORMAT, exactly(("project", NAME))),
    # A cluster's masterAuth can hold a legacy password or client key: the default table only.
    ("container", "clusters", "list"): Verb({"--region": value(NAME), "--zone": value(NAME)}),
})

# --- small CLIs with a fixed read -----------------------------------------------------------------------
GH = Tool("gh", "gnu", {}, {("auth", "status"): Verb({"-h": value(NAME), "--hostname": value(NAME)})})
DOCKER = Tool("docker", "gnu", {}, {("version",): Verb(), ("info",): Verb()})
# `vault token lookup` prints the token itself (its `id`): `token capabilities` proves the token instead.
VAULT = Tool("vault", "goflag", {"-address": value(matches(r"https?://[A-Za-z0-9.:-]+/?", "an http(s) address")),
                                 "-format": value(one_of("table", "json", "yaml"))}, {
    ("status",): Verb(),
    ("token", "capabilities"): Verb({}, names("path", check=matches(r"[A-Za-z0-9_/.-]{1,200}", "a vault path"))),
})

AWS = _no_file_values(AWS, ("file:", "fileb:", "http:", "https:"))
AZ = _no_file_values(AZ, ("@",))
TOOLS: dict[str, Tool] = {t.name: t for t in (KUBECTL, HELM, AWS, AZ, GCLOUD, GH, DOCKER, VAULT)}
