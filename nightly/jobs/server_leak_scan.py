"""server-leak-scan: every file stored in OpenViking checked for every known value (retired ones
too) and every pattern rule. Findings by URI, secret id or rule, and line; `muninn leak purge`
cleans them."""

from __future__ import annotations

from muninn.nightly import server_scan
from muninn.nightly.jobs import Context, JobResult


def server_leak_scan(ctx: Context) -> JobResult:
    report = server_scan.scan(ctx.settings)
    data = report.to_json()
    if report.found:
        where = "; ".join(f"{f.uri}: " + ", ".join(sorted({f"{x['reason']}:{x['secret_id'] or ''} line {x['line']}"
                                                           for x in f.findings}))
                          for f in report.found[:5])
        more = f" (+{len(report.found) - 5} more)" if len(report.found) > 5 else ""
        return JobResult("server-leak-scan", False, f"{len(report.found)} file(s) on the server hold a secret: "
                         f"{where}{more}; run `muninn leak purge`", data)
    detail = f"{report.files} file(s) clean as {', '.join(report.identities)}"
    if report.unchanged:
        detail += f" ({report.unchanged} unchanged since found clean, not read again)"
    if report.unreadable:
        return JobResult("server-leak-scan", True, f"{detail}; {len(report.unreadable)} not readable", data,
                         status="warn")
    return JobResult("server-leak-scan", True, detail, data)
