"""Policy drift: each area's effective ACL on the server against policy.yaml, top-level folders under
viking://resources that no policy area covers (any user may create them), and any reader's local
keyword index holding a file its policy does not let it read (`muninn policy check` says the same)."""

from __future__ import annotations

from muninn.core import policy as policy_mod
from muninn.core import registry
from muninn.core.client import OpenViking
from muninn.nightly.jobs import Context, JobResult
from muninn.plugins.stack import policy_apply


def acl_drift(ctx: Context) -> JobResult:
    pol = policy_mod.load_for(ctx.settings)
    states = policy_apply.drift(ctx.settings, pol)
    bad = [f"{s.uri}: {s.describe()}" for s in states if not s.ok]
    covered = {u.split("/")[3] for u in pol.areas.values()}
    with OpenViking.user(ctx.settings) as client:
        top = {e.uri.rstrip("/").split("/")[3] for e in client.ls("viking://resources") if e.is_dir}
    strays = sorted(top - covered)
    bad += [f"viking://resources/{s}: top-level folder not in policy.yaml" for s in strays]
    bad += [f"reader {x['reader']}: keyword index holds {x['files']} file(s) its policy does not let it read: "
            f"run `{x['fix']}`" for check in registry.store_leaks() for x in check(ctx.settings, pol)]
    return JobResult("acl-drift", not bad, "; ".join(bad) or f"{len(states)} areas match the policy",
                     {"areas": len(states), "drift": bad})
