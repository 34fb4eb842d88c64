"""Known values from where secrets live: Kubernetes Secrets through a stand-in kubectl (tests/kube/bin,
which prints the real JSON shapes) and `.env` files of repo sources, redacted everywhere."""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import shutil
import sqlite3
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from conftest import tcp_listener

from muninn.core.config import load as load_settings
from muninn.evals.lab.bench_known_values import pem_pair
from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.known import secret_values
from muninn.plugins.access import kube_secrets, kube_values

BIN = Path(__file__).parent / "kube" / "bin"

DB_PASSWORD = "Vq8#mZ2rT9kL4wXp"
API_TOKEN = "tok_9fK2mQ7xV4bN8cR1zL6p"
SA_TOKEN = "eyJhbGciOiJSUzI1NiIsImtpZCI6Ik1hY2hpbmUifQ.eyJzdWIiOiJzeXN0ZW06c2E6Y2k6cmVhZGVyIn0.c2lnbmF0dXJlLXN0YW5kLWlu"
REGISTRY_PASSWORD = "rg-Pw7Xk2Lm9Qz4Nt8V"
ROTATED = "Hn3$wQ8vZ1kR6tYp"
# Public or identifying: never known values.
HOST = "db01.prod.example.com"
USER = "svc-billing-2024"
NAMESPACE = "billing-prod"
REGISTRY = "registry.example.com"


CERT, KEY = pem_pair("billing.example.com")
CA_CERT, _ = pem_pair("billing.example.com")
CA_LINE = CA_CERT.splitlines()[3]
KEY_LINE = KEY.splitlines()[2]


def _secrets(password: str = DB_PASSWORD) -> list[dict]:
    docker = {"auths": {REGISTRY: {"username": USER, "password": REGISTRY_PASSWORD,
                                   "auth": base64.b64encode(f"{USER}:{REGISTRY_PASSWORD}".encode()).decode()}}}
    return [
        {"namespace": NAMESPACE, "name": "billing-db", "type": "Opaque",
         "data": {"host": HOST, "username": USER, "password": password, "port": "5432", "api-token": API_TOKEN},
         "annotations": {"kubectl.kubernetes.io/last-applied-configuration": '{"apiVersion":"v1","kind":"Secret"}'}},
        {"namespace": NAMESPACE, "name": "billing-tls", "type": "kubernetes.io/tls",
         "data": {"tls.crt": CERT, "tls.key": KEY}},
        {"namespace": NAMESPACE, "name": "regcred", "type": "kubernetes.io/dockerconfigjson",
         "data": {".dockerconfigjson": json.dumps(docker)}},
        {"namespace": "ci", "name": "reader-token", "type": "kubernetes.io/service-account-token",
         "annotations": {"kubernetes.io/service-account.name": "reader",
                         "kubernetes.io/service-account.uid": "5b0f5a4e-6f5c-4d8e-9a51-3c2e1f0d9b7a"},
         "data": {"ca.crt": CA_CERT, "namespace": "ci", "token": SA_TOKEN}},
    ]


SECRET_VALUES = (DB_PASSWORD, API_TOKEN, SA_TOKEN, REGISTRY_PASSWORD, KEY_LINE)
PUBLIC_VALUES = (HOST, USER, NAMESPACE, REGISTRY, CA_LINE, CERT.splitlines()[2])


class Cluster:
    def __init__(self, root: Path) -> None:
        self.state_file, self.log = root / "kube-state.json", root / "kube.log"
        self.state: dict = {"contexts": {"ops": {"reachable": True, "secrets": _secrets(), "namespace": "default"}}}
        self.save()

    @property
    def ops(self) -> dict:
        return self.state["contexts"]["ops"]

    def save(self) -> None:
        self.state_file.write_text(json.dumps(self.state))

    def calls(self) -> list[list[str]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []

    def get(self, resource: str, **ctx: object) -> dict:
        self.ops.update(ctx)
        self.save()
        out = subprocess.run([str(BIN / "kubectl"), "--context", "ops", "get", resource, "-A", "-o", "json"],
                             capture_output=True, text=True, env={**os.environ})
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)


@pytest.fixture
def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Cluster:
    c = Cluster(tmp_path)
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("KUBE_STATE", str(c.state_file))
    monkeypatch.setenv("KUBE_LOG", str(c.log))
    return c


@pytest.fixture
def vpn() -> Iterator[int]:
    with tcp_listener() as sock:
        yield sock.getsockname()[1]


@pytest.fixture
def workspace(tmp_path: Path, vpn: int) -> Path:
    """muninn.yaml: an inventory naming context `ops` behind a VPN, and a notes source."""
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(yaml.safe_dump([
        {"id": "vpn", "kind": "vpn", "tcp": f"127.0.0.1:{vpn}"},
        {"id": "ops-cluster", "kind": "cluster", "requires": ["vpn"], "verify": "kubectl --context ops get nodes"},
    ]))
    (tmp_path / "notes").mkdir()
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({
        "inventory": {"files": [str(inventory)]},
        "sources": [{"kind": "notes", "path": str(tmp_path / "notes"), "area": "viking://resources/notes"}],
    }))
    return cfg


def _note(cfg: Path, text: str, name: str = "billing.md") -> None:
    (cfg.parent / "notes" / name).write_text(f"# Billing database\n\n{text}\n")


def _exported(cfg: Path) -> str:
    root = load_settings(cfg).paths.exports
    return "\n".join(p.read_text() for p in sorted(root.rglob("*.md")))


MENTIONS = (f"Connect to {HOST} as {USER} in namespace {NAMESPACE}; the password is {DB_PASSWORD} and the "
            f"API token `{API_TOKEN}`.\n\nThe reader token: {SA_TOKEN}\n\nPull from {REGISTRY} with "
            f"{REGISTRY_PASSWORD}.\n\nThe CA, for curl --cacert:\n\n{CA_CERT}\nThe TLS key pasted by mistake:\n\n"
            f"{KEY}")


# --- what is read from a Secret -------------------------------------------------------------------


def test_the_stand_in_prints_the_real_list_shape(cluster: Cluster) -> None:
    doc = cluster.get("secrets")
    assert doc["kind"] == "List" and doc["apiVersion"] == "v1" and doc["metadata"] == {"resourceVersion": ""}
    assert {i["type"] for i in doc["items"]} == {"Opaque", "kubernetes.io/tls", "kubernetes.io/dockerconfigjson",
                                                  "kubernetes.io/service-account-token"}
    assert all(i["kind"] == "Secret" and "stringData" not in i for i in doc["items"])


def test_secret_values_are_kept_and_public_ones_left_out(cluster: Cluster) -> None:
    found = {v: i for i, v in kube_secrets.values(cluster.get("secrets"), "ops")}
    values = set(found)
    for value in (DB_PASSWORD, API_TOKEN, SA_TOKEN, REGISTRY_PASSWORD):
        assert value in values
    assert any(v.startswith("-----BEGIN PRIVATE KEY-----") for v in values)   # tls.key kept whole
    for value in values:
        assert "CERTIFICATE" not in value and value not in (HOST, USER, NAMESPACE, "ci", "5432")
        assert REGISTRY not in value and USER not in value   # the whole docker config is not a value
    assert found[DB_PASSWORD] == f"kube:ops/{NAMESPACE}/billing-db.password"


@pytest.mark.parametrize("doc", [
    {"kind": "ConfigMap", "data": {"password": base64.b64encode(b"Zk4pQ9wT2mX7vL1r").decode()}},
    {"apiVersion": "v1", "kind": "List", "items": [{"kind": "ConfigMap", "metadata": {"name": "x"},
                                                     "data": {"token": "Zk4pQ9wT2mX7vL1r"}}]},
])
def test_only_objects_of_kind_secret(doc: dict) -> None:
    assert list(kube_secrets.values(doc, "ops")) == []


def test_string_data_json_keys_and_config_files_inside_a_secret() -> None:
    sa_key = json.dumps({"type": "service_account", "project_id": "billing-prod-123456",
                         "private_key_id": "a3f1c9e2b7d4a8f6c0e1b2d3a4f5c6e7b8a9d0e1", "private_key": KEY,
                         "client_email": "reader@billing-prod-123456.iam.gserviceaccount.com",
                         "client_id": "104523981273645098123", "token_uri": "https://oauth2.googleapis.com/token"})
    config = f"host: {HOST}\nuser: {USER}\npassword: {DB_PASSWORD}\n"
    doc = {"kind": "Secret", "metadata": {"name": "app", "namespace": "web"},
           "stringData": {"gcp.json": sa_key, "app.yaml": config}}
    values = {v for _, v in kube_secrets.values(doc, "ops")}
    assert DB_PASSWORD in values and KEY.strip() in values   # the key of the JSON key file, unescaped
    assert not values & {HOST, USER, "billing-prod-123456", "104523981273645098123"}
    assert not any("@" in v or "oauth2" in v for v in values)


# --- through a real export -----------------------------------------------------------------------


def test_export_redacts_secret_values_and_keeps_names(workspace: Path, cluster: Cluster, run_muninn) -> None:
    _note(workspace, MENTIONS)
    done = run_muninn(["--config", str(workspace), "export", "all", "--json"])
    assert done.exit_code == 0, done.stderr
    text = _exported(workspace)
    for value in SECRET_VALUES:
        assert value not in text
    assert f"[REDACTED:kube:ops/{NAMESPACE}/billing-db.password]" in text
    for value in PUBLIC_VALUES:
        assert value in text, value
    # read-only: only `get secrets|namespaces -o json`, never another verb
    calls = cluster.calls()
    assert calls and all(c[c.index("get") + 1] in ("secrets", "namespaces") and c[-2:] == ["-o", "json"]
                         for c in calls)
    assert not any(v in c for c in calls for v in ("edit", "apply", "delete", "patch", "create"))


def test_the_cache_is_sealed_and_0600(workspace: Path, cluster: Cluster) -> None:
    s = load_settings(workspace)
    assert kube_values.refresh(s) == []
    path = s.paths.known_values_cache
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    raw = path.read_bytes()
    assert not any(v.encode() in raw for v in SECRET_VALUES)
    assert DB_PASSWORD in {v for _, v in kube_values.cached(s)}


@pytest.mark.parametrize("down", [{"reachable": False}, {"timeout": True}])
def test_an_unreachable_cluster_warns_and_its_cached_values_still_redact(
        workspace: Path, cluster: Cluster, run_muninn, down: dict) -> None:
    assert run_muninn(["--config", str(workspace), "export", "all"]).exit_code == 0
    cluster.ops.update(down)
    cluster.save()
    _note(workspace, MENTIONS)
    done = run_muninn(["--config", str(workspace), "export", "all"])
    assert done.exit_code == 0, done.stderr
    assert "kubernetes context ops did not answer" in done.stderr and "stay in use" in done.stderr
    assert not any(v in done.stderr for v in SECRET_VALUES)
    text = _exported(workspace)
    assert not any(v in text for v in SECRET_VALUES)


def test_a_down_prerequisite_is_not_passed_and_the_cache_is_used(workspace: Path, cluster: Cluster) -> None:
    s = load_settings(workspace)
    kube_values.refresh(s)
    before = len(cluster.calls())
    with tcp_listener() as sock:
        closed = sock.getsockname()[1]
    inventory = Path(s.inventory.files[0])
    entries = yaml.safe_load(inventory.read_text())
    entries[0]["tcp"] = f"127.0.0.1:{closed}"   # nothing listens there now: the VPN is down
    inventory.write_text(yaml.safe_dump(entries))
    warnings = kube_values.refresh(load_settings(workspace))
    assert len(cluster.calls()) == before   # kubectl was not run behind a down VPN
    assert warnings and "prerequisite 'vpn' is down" in warnings[0] and "connect the VPN" in warnings[0]
    assert DB_PASSWORD in {v for _, v in kube_values.cached(s)}


def test_a_rotated_value_is_picked_up(workspace: Path, cluster: Cluster, run_muninn) -> None:
    assert run_muninn(["--config", str(workspace), "export", "all"]).exit_code == 0
    cluster.ops["secrets"] = _secrets(password=ROTATED)
    cluster.save()
    _note(workspace, f"New password {ROTATED}.")
    assert run_muninn(["--config", str(workspace), "export", "all"]).exit_code == 0
    assert ROTATED not in _exported(workspace)
    known = secret_values.known(load_settings(workspace))
    assert known[ROTATED].endswith("billing-db.password") and DB_PASSWORD not in known


def test_forbidden_all_namespaces_reads_each_namespace(workspace: Path, cluster: Cluster) -> None:
    cluster.ops["forbid"] = ["all", "ci"]
    cluster.save()
    warnings = kube_values.refresh(load_settings(workspace))
    values = {v for _, v in kube_values.cached(load_settings(workspace))}
    assert DB_PASSWORD in values and SA_TOKEN not in values
    assert warnings == ["kubernetes context ops: the Secrets of 1 namespace(s) are forbidden to this user and "
                        "were not read (their cached values stay in use)"]
    assert ["--context=ops", "--request-timeout=20s", "--namespace=ci", "get", "secrets", "-o", "json"] \
        in cluster.calls()


def test_no_namespace_list_reads_the_contexts_own_namespace(workspace: Path, cluster: Cluster) -> None:
    cluster.ops.update(forbid=["all", "namespaces"], namespace=NAMESPACE)
    cluster.save()
    assert kube_values.refresh(load_settings(workspace)) == []
    values = {v for _, v in kube_values.cached(load_settings(workspace))}
    assert DB_PASSWORD in values and SA_TOKEN not in values


def test_doctor_says_when_the_cache_is_old(workspace: Path, cluster: Cluster) -> None:
    s = load_settings(workspace)
    assert kube_values.doctor(s)[0].level == "warn"   # never read
    kube_values.refresh(s)
    assert kube_values.doctor(s)[0].level == "ok"
    old = (dt.datetime.now(dt.UTC) - dt.timedelta(days=s.known_values.max_age_days + 2)).isoformat()
    with sqlite3.connect(s.paths.known_values_cache) as db:
        db.execute("UPDATE secrets SET updated_at = ?", (old,))
    check = kube_values.doctor(s)[0]
    assert check.level == "warn" and "ops (9 days old)" in check.detail and "export all" in check.fix


# --- .env files of a repo source -----------------------------------------------------------------

STRIPE = "sk_live_51HqZ8vK2mN7pL4xR9tW3yB6cD"
SESSION_KEY = "Yb7Qm2Vx9Kp4Lz8Rn3Tw6Hs1"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})


def test_env_files_of_a_repo_source_are_redacted_everywhere(tmp_path: Path, run_muninn) -> None:
    repo = tmp_path / "billing-api"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# billing-api\n\nSee .env.example.\n")
    (repo / "deploy").mkdir()
    (repo / "deploy" / "prod.env").write_text(f"STRIPE_KEY={STRIPE}\nDB_HOST={HOST}\nDB_USER={USER}\n")
    (repo / ".env.example").write_text("STRIPE_KEY=sk_test_placeholder0000000000\n")
    (repo / ".gitignore").write_text(".env\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "init")
    (repo / ".env").write_text(f"SESSION_KEY='{SESSION_KEY}'\n")   # untracked, as it usually is
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "deploy.md").write_text(f"# Deploy\n\nStripe {STRIPE} and session {SESSION_KEY} on {HOST} "
                                     f"as {USER}; the example key is sk_test_placeholder0000000000.\n")
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"sources": [
        {"kind": "notes", "path": str(notes), "area": "viking://resources/notes"},
        {"kind": "repo", "path": str(repo), "area": "viking://resources/repos"}]}))
    done = run_muninn(["--config", str(cfg), "export", "all"])
    assert done.exit_code == 0, done.stderr
    text = _exported(cfg)
    assert STRIPE not in text and SESSION_KEY not in text
    assert "[REDACTED:env:billing-api/deploy/prod.env@HEAD:STRIPE_KEY]" in text
    assert "[REDACTED:env:billing-api/.env:SESSION_KEY]" in text
    assert HOST in text and USER in text
    known = secret_values.known(load_settings(cfg))
    assert "sk_test_placeholder0000000000" not in known   # a template's placeholder is not a known value
    assert {v for v, i in known.items() if i.startswith("env:")} == {STRIPE, SESSION_KEY}


# --- the leak gate's own reading -----------------------------------------------------------------


def test_the_leak_gate_catches_a_kube_value_that_got_through(workspace: Path, cluster: Cluster,
                                                             tmp_path: Path) -> None:
    s = load_settings(workspace)
    kube_values.refresh(s)
    tree = tmp_path / "written-by-hand"
    tree.mkdir()
    (tree / "note.md").write_text(f"# Note\n\nThe api token was {API_TOKEN} yesterday.\n")
    (tree / "plain.md").write_text(f"# Plain\n\n{HOST} in {NAMESPACE} as {USER}.\n")
    report = LeakGate(secret_values.known(s)).check_tree(tree)
    flagged = {Path(d.path).name for d in report.dropped}
    assert flagged == {"note.md"}


def test_a_repo_exported_alone_redacts_its_own_env_values(tmp_path: Path, run_muninn) -> None:
    repo = tmp_path / "svc"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "config.env").write_text(f"SESSION_KEY={SESSION_KEY}\nAPP_HOST={HOST}\n")
    (repo / "NOTES.md").write_text(f"# Notes\n\nThe session key {SESSION_KEY} works on {HOST}.\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "init")
    out = tmp_path / "out"
    done = run_muninn(["export", "repo", str(repo), "--out", str(out)])
    assert done.exit_code == 0, done.stderr
    text = "\n".join(p.read_text() for p in out.rglob("*.md"))
    assert SESSION_KEY not in text and "[REDACTED:env:svc/config.env@HEAD:SESSION_KEY]" in text and HOST in text


def test_the_sources_come_through_the_one_hook() -> None:
    from muninn.core import registry

    sources = {s.name: s for s in registry.known_value_stores()}
    assert {"vault", "kubernetes", "sources"} <= set(sources)
    assert sources["vault"].declared and not sources["kubernetes"].declared and not sources["sources"].declared
    assert sources["kubernetes"].refresh is kube_values.refresh
    assert kube_values.doctor in registry.checks()


def test_mcp_outputs_hide_cached_values_while_the_cluster_is_down(workspace: Path, cluster: Cluster) -> None:
    from muninn.plugins.mcp.redaction import ValueRedactor

    s = load_settings(workspace)
    kube_values.refresh(s)
    cluster.ops["reachable"] = False
    cluster.save()
    calls = len(cluster.calls())
    scrubbed = ValueRedactor.from_settings(s).scrub(f"token {API_TOKEN} on {HOST}")
    assert API_TOKEN not in scrubbed and HOST in scrubbed
    assert len(cluster.calls()) == calls   # redactors read the cache, never the cluster


def test_a_failing_setup_step_says_which_and_prints_no_secret(workspace: Path, cluster: Cluster) -> None:
    s = load_settings(workspace)
    kube_values.refresh(s)
    inventory = Path(s.inventory.files[0])
    entries = yaml.safe_load(inventory.read_text())
    entries[1]["access"] = ["export KUBECONFIG=/tmp/ops.yaml", f"cd /nonexistent/{API_TOKEN}"]
    inventory.write_text(yaml.safe_dump(entries))
    (warning,) = kube_values.refresh(load_settings(workspace))
    assert "did not answer (muninn: access step 2 failed: cd /nonexistent/[REDACTED:kube:ops/" in warning
    assert API_TOKEN not in warning and "stay in use" in warning


def test_a_damaged_cache_fails_closed_and_export_rebuilds_it(workspace: Path, cluster: Cluster) -> None:
    s = load_settings(workspace)
    kube_values.refresh(s)
    s.paths.known_values_cache.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    with pytest.raises(kube_values.CacheDamaged, match="known-values cache"):
        secret_values.known(s)
    (warning,) = kube_values.refresh(s)
    assert "moved aside" in warning
    assert DB_PASSWORD in secret_values.known(s)


# --- what the unattended read runs ---------------------------------------------------------------


def _bash_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `bash` first on PATH that logs how it was started, then runs the real one."""
    folder, log = tmp_path / "bash-bin", tmp_path / "bash.log"
    folder.mkdir()
    real = shutil.which("bash")
    (folder / "bash").write_text(f'#!{real}\nprintf "%s\\n" "$1" >> {log}\nexec {real} "$@"\n')
    (folder / "bash").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return log


def _ran_a_script(log: Path) -> bool:
    return log.exists() and "-c" in log.read_text().splitlines()


def _access(cfg: Path, lines: list[str]) -> None:
    inventory = Path(load_settings(cfg).inventory.files[0])
    entries = yaml.safe_load(inventory.read_text())
    entries[1]["access"] = lines
    inventory.write_text(yaml.safe_dump(entries))


@pytest.mark.parametrize("line", [
    "source {env}; touch {marker}",
    "export KUBECONFIG={env} && touch {marker}",
    "source {env} | tee {marker}",
    "export X=$(touch {marker})",
    "export X=`touch {marker}`",
    "source {env} > {marker}",
    "export X=1\ntouch {marker}",
    "KUBECONFIG={env} touch {marker}",
    "set -o pipefail",
    "kubectx prod-admin",
    "gcloud config set project prod",
    "az account set --subscription prod",
])
def test_an_unsafe_setup_line_skips_the_context_and_runs_nothing(
        workspace: Path, cluster: Cluster, tmp_path: Path, line: str) -> None:
    env, marker = tmp_path / "ops.env", tmp_path / "PWNED"
    env.write_text(f"touch {marker}\n")
    text = line.format(env=env, marker=marker)
    _access(workspace, ["export KUBECONFIG=/tmp/ops.yaml", text])
    (warning,) = kube_values.refresh(load_settings(workspace))
    assert warning.startswith("kubernetes context ops: access step 2 of ops-cluster is not run unattended (")
    assert "none of its values are cached yet" in warning and "before `muninn export`" in warning
    assert not marker.exists() and cluster.calls() == []   # neither the line nor kubectl ran


def test_safe_setup_lines_run_without_a_shell(workspace: Path, cluster: Cluster, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    bash = _bash_calls(tmp_path, monkeypatch)
    monkeypatch.setenv("KUBE_UNSET_ME", "1")
    seen = tmp_path / "seen.json"
    (tmp_path / "here").mkdir()
    _access(workspace, ["export KUBECONFIG=$HOME/.kube/ops.yaml KUBE_SEEN=" + str(seen), "PLAIN=1",
                        "export FROM_PLAIN=${PLAIN}x", "unset KUBE_UNSET_ME", f"cd {tmp_path / 'here'}",
                        "kubectl config use-context ops", "kubectl get nodes", "on the bastion: sudo -i"])
    assert kube_values.refresh(load_settings(workspace)) == []
    got = json.loads(seen.read_text())
    assert got["env"]["KUBECONFIG"] == f"{os.environ['HOME']}/.kube/ops.yaml" and got["env"]["FROM_PLAIN"] == "1x"
    assert "PLAIN" not in got["env"] and "KUBE_UNSET_ME" not in got["env"]   # a plain variable is not exported
    assert got["cwd"] == str(tmp_path / "here") and not _ran_a_script(bash)
    assert DB_PASSWORD in {v for _, v in kube_values.cached(load_settings(workspace))}
    assert all(c[c.index("get") + 1] in ("secrets", "namespaces") for c in cluster.calls())


def test_a_sourced_file_runs_and_its_output_stays_off_the_json(workspace: Path, cluster: Cluster, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    bash = _bash_calls(tmp_path, monkeypatch)
    seen, env = tmp_path / "seen.json", tmp_path / "ops env.sh"
    env.write_text(f"echo 'sourced, said on stdout'\nexport KUBE_SEEN={seen}\nOPS_DIR=/srv/ops\n")
    _access(workspace, [f"source '{env}'", "export KUBECONFIG=${OPS_DIR}/kubeconfig"])
    assert kube_values.refresh(load_settings(workspace)) == []
    got = json.loads(seen.read_text())
    assert _ran_a_script(bash) and got["env"]["KUBECONFIG"] == "/srv/ops/kubeconfig"
    assert DB_PASSWORD in {v for _, v in kube_values.cached(load_settings(workspace))}


def test_access_exec_still_runs_the_owners_lines(workspace: Path, cluster: Cluster, tmp_path: Path) -> None:
    from muninn.plugins.access.inventory import Inventory

    marker = tmp_path / "attended"
    _access(workspace, [f"export A=1; touch {marker}"])
    out = Inventory.open(load_settings(workspace)).exec("ops-cluster", ["true"], stdout=None, stderr=None)
    assert out.exit_code == 0 and marker.exists()   # attended: the owner is there, the line runs as written


def test_a_failure_line_is_scrubbed_of_every_known_value(workspace: Path, cluster: Cluster,
                                                         tmp_path: Path) -> None:
    vault_value, env_value = "Vt7#kQ2mX9pL4wZr", "Ev8mQ3xK7pL2zR9t"
    secrets = tmp_path / "secrets.yaml"
    secrets.write_text(yaml.safe_dump([{"id": "ops-db", "value": vault_value}]))
    dotenv = tmp_path / "ops.env"
    dotenv.write_text(f"OPS_TOKEN={env_value}\n")
    cfg = yaml.safe_load(workspace.read_text())
    cfg["export"] = {"secret_files": [str(secrets), str(dotenv)]}
    workspace.write_text(yaml.safe_dump(cfg))
    _access(workspace, [f"cd /nonexistent/{vault_value}/{env_value}"])
    (warning,) = kube_values.refresh(load_settings(workspace))
    assert "access step 1 failed" in warning and "[REDACTED:" in warning
    assert vault_value not in warning and env_value not in warning


def test_a_namespace_not_read_now_keeps_its_cached_values(workspace: Path, cluster: Cluster) -> None:
    s = load_settings(workspace)
    assert kube_values.refresh(s) == []
    cluster.ops["forbid"] = ["all", "ci"]        # RBAC narrowed: ci may no longer be read
    cluster.ops["secrets"] = _secrets(password=ROTATED)
    cluster.save()
    kube_values.refresh(s)
    values = {v for _, v in kube_values.cached(s)}
    assert SA_TOKEN in values                                 # ci's value, kept from the last read
    assert ROTATED in values and DB_PASSWORD not in values    # billing-prod was read: its rotation replaced it
    cluster.ops.update(forbid=["all", "namespaces"], namespace=NAMESPACE)
    cluster.ops["secrets"] = [x for x in _secrets(password=ROTATED) if x["name"] != "regcred"]
    cluster.save()
    kube_values.refresh(s)
    values = {v for _, v in kube_values.cached(s)}
    assert SA_TOKEN in values and ROTATED in values and REGISTRY_PASSWORD not in values   # regcred deleted


def test_a_wider_cache_file_is_set_back_to_0600(workspace: Path, cluster: Cluster,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    s = load_settings(workspace)
    kube_values.refresh(s)
    s.paths.known_values_cache.chmod(0o644)      # restored from a backup under umask 022
    (warning,) = kube_values.refresh(s)
    assert "was mode 644" in warning and "set to 600" in warning and "was mode 644" in capsys.readouterr().err
    assert stat.S_IMODE(s.paths.known_values_cache.stat().st_mode) == 0o600


def test_only_the_two_reads_are_ever_made() -> None:
    from muninn.plugins.access import unattended

    with pytest.raises(ValueError, match="only secrets and namespaces"):
        kube_values._kubectl(unattended.Setup(), "ops", ["delete", "secrets"], 1)
