"""Build examples/tasks.db: a small home-lab roadmap (projects, tasks, observations, mistakes).

    python examples/make_tasks_db.py [OUT]

The schema is the default mapping of the `tasks` source; the rows are invented.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

SCHEMA = """
CREATE TABLE projects (id INTEGER PRIMARY KEY, name TEXT NOT NULL, description TEXT);
CREATE TABLE tasks (id INTEGER PRIMARY KEY, project_id INTEGER REFERENCES projects(id), title TEXT NOT NULL,
                    description TEXT, status TEXT, priority INTEGER, created_at TEXT, updated_at TEXT, tags TEXT);
CREATE TABLE observations (id INTEGER PRIMARY KEY, project_id INTEGER REFERENCES projects(id), text TEXT NOT NULL,
                           created_at TEXT, tags TEXT);
CREATE TABLE mistakes (id INTEGER PRIMARY KEY, project_id INTEGER REFERENCES projects(id), title TEXT NOT NULL,
                       what_happened TEXT, lesson TEXT, created_at TEXT, tags TEXT);
"""

PROJECTS = [
    (1, "homelab", "the Proxmox cluster, NAS and network at home"),
    (2, "observability", "metrics, logs and alerting for every host and service"),
    (3, "platform", "the ops Kubernetes cluster and its GitOps tooling"),
    (4, "backups", "restic backups of the NAS and the databases, and restore drills"),
]

TASKS = [
    (1, 1, "Replace the failing disk in pve2", "SMART shows 48 reallocated sectors on /dev/sdb in pve2. Order a "
     "WD Red 4TB, migrate the VMs to pve1 first, swap the disk, resilver the ZFS mirror.", "done", 1,
     "2025-09-02", "2025-09-10", "proxmox,zfs,hardware"),
    (2, 2, "Pick a log viewer for the Docker hosts", "Compared Dozzle, Loki+Grafana and Graylog. Chose Dozzle: "
     "single container, no storage, live tail per container. Loki stays for long-term search.", "done", 2,
     "2025-08-14", "2025-08-20", "logging,docker,dozzle"),
    (3, 2, "Alert when a certificate expires within 14 days", "Add a blackbox-exporter probe per public hostname "
     "and an alert rule on probe_ssl_earliest_cert_expiry. Route to the ops channel.", "in progress", 1,
     "2025-10-01", "2025-10-12", "alerting,tls,prometheus"),
    (4, 3, "Upgrade the ops cluster to Kubernetes 1.31", "Control plane first, then node groups one by one. "
     "Check deprecated APIs with pluto before starting; ArgoCD must be on 2.12 or later.", "planned", 2,
     "2025-10-05", "2025-10-05", "kubernetes,eks,upgrade"),
    (5, 3, "Move ArgoCD to SSO login", "Replace the local admin account with OIDC through the identity provider. "
     "Keep one break-glass account, documented in the vault as argocd-breakglass.", "planned", 3,
     "2025-10-06", "2025-10-06", "argocd,sso"),
    (6, 4, "Monthly restore drill for Postgres", "Restore last night's dump of the wiki database into a scratch "
     "VM, run the row-count check, time it. Last drill: 11 minutes.", "recurring", 2,
     "2025-07-01", "2025-10-01", "postgres,restore,drill"),
    (7, 4, "Encrypt offsite backups with a new repository key", "The old restic repository key was shared with "
     "the laptop. Create a new key, re-key the B2 repository, remove the old key.", "done", 1,
     "2025-06-11", "2025-06-12", "restic,b2,encryption"),
    (8, 1, "Put the IoT devices on their own VLAN", "VLAN 30 for IoT, firewall rule: IoT may reach the MQTT broker "
     "on 10.0.30.5:1883 and nothing else on the LAN.", "done", 2, "2025-05-03", "2025-05-18", "network,vlan"),
]

OBSERVATIONS = [
    (1, 2, "Dozzle does not keep history: after a container restart the old log lines are gone. Use Loki for "
     "anything older than the current run.", "2025-08-21", "dozzle,loki"),
    (2, 3, "The kubeconfig script in the infra repo sets the context name to ops-cluster; kubectl contexts "
     "named ops-prod are stale leftovers and point at the old cluster.", "2025-09-15", "kubectl,kubeconfig"),
    (3, 1, "When the VPN is down, the internal services answer 403 instead of timing out. Check the VPN before "
     "rotating any token.", "2025-09-28", "vpn,403"),
    (4, 4, "restic prune on the B2 repository takes 40 minutes and costs API calls; run it weekly, not nightly.",
     "2025-06-20", "restic,b2"),
]

MISTAKES = [
    (1, 3, "Deleted the ingress controller during the cluster upgrade", "Ran `kubectl delete -f` on the old "
     "manifests folder, which still held the ingress-nginx Deployment. Public sites were down 25 minutes.",
     "Never apply or delete a whole folder during an upgrade; diff with ArgoCD first.", "2025-09-30",
     "kubernetes,outage"),
    (2, 4, "Backups silently stopped for nine days", "The restic cron job failed after the NAS password change; "
     "nothing alerted because the job only logged to a file.", "Every backup job pushes a heartbeat metric; "
     "alert when it is older than 26 hours.", "2025-07-09", "restic,alerting"),
]


def build(out: Path) -> Path:
    out.unlink(missing_ok=True)
    db = sqlite3.connect(out)
    db.executescript(SCHEMA)
    db.executemany("INSERT INTO projects VALUES (?,?,?)", PROJECTS)
    db.executemany("INSERT INTO tasks VALUES (?,?,?,?,?,?,?,?,?)", TASKS)
    db.executemany("INSERT INTO observations VALUES (?,?,?,?,?)", OBSERVATIONS)
    db.executemany("INSERT INTO mistakes VALUES (?,?,?,?,?,?,?)", MISTAKES)
    db.commit()
    db.close()
    return out


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("tasks.db")
    print(build(target))
