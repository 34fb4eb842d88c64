"""The nightly run without a server: the lock, statuses and exit codes, report keeping, the
retired-value ledger's hash scan, busy retries and span redaction in purge."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from muninn.core import config, hookspecs, registry
from muninn.core.errors import AuthError, ExitCode, MuninnError, ServerError
from muninn.guards.known import retired
from muninn.nightly import lock, purge, runner, server_scan
from muninn.nightly.jobs import Context, JobResult

SECRET = "Zq8vN3kT5pW2rX7m"


@pytest.fixture
def settings(tmp_path: Path, isolated_keyring: Path):
    # A keyring of this test's own: the session's keyring holds the integration stack's root key,
    # and these tests are about what happens without a server.
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), "nightly": {"keep_reports": 3}}))
    return config.load(cfg)


@pytest.fixture
def jobs():
    """Register throw-away jobs through the registry, as an outside plugin would; always removed."""
    added: list[object] = []

    def add(name: str, fn):
        class Plugin:
            @hookspecs.hookimpl
            def register_jobs(self, register) -> None:
                register(name, fn)

        plugin = Plugin()
        registry.add(plugin)
        added.append(plugin)

    yield add
    for plugin in added:
        registry.remove(plugin)


# --- statuses and exit codes ---------------------------------------------------------------

CRASHES = [
    ("muninn-error", MuninnError("the thing is broken", fix="fix it"), "the thing is broken"),
    ("key-error", KeyError("missing"), "KeyError"),
    ("zero-division", ZeroDivisionError("division by zero"), "ZeroDivisionError: division by zero"),
    ("os-error", OSError(28, "No space left on device"), "No space left on device"),
    ("assertion", AssertionError("invariant"), "AssertionError: invariant"),
]


@pytest.mark.parametrize(("name", "exc", "shown"), CRASHES, ids=[c[0] for c in CRASHES])
def test_any_exception_is_a_failed_job_and_the_others_still_run(settings, jobs, name, exc, shown) -> None:
    def boom(ctx: Context) -> JobResult:
        raise exc

    jobs(f"t-{name}", boom)
    jobs("t-fine", lambda ctx: JobResult("t-fine", True, "fine"))
    results = runner.run(settings, [f"t-{name}", "t-fine"])
    assert [r.status for r in results] == ["error", "ok"]
    assert shown in results[0].detail and results[0].detail.startswith("could not run")
    assert runner.exit_code(results) == ExitCode.JOB_FAILED
    path = runner.save(settings, results)
    assert json.loads(path.read_text())["exit_code"] == ExitCode.JOB_FAILED


EXITS = [
    (["ok"], ExitCode.OK),
    (["ok", "warn"], ExitCode.OK),
    (["warn"], ExitCode.OK),
    (["ok", "findings"], ExitCode.CHECK_FAILED),
    (["warn", "findings"], ExitCode.CHECK_FAILED),
    (["findings", "error"], ExitCode.JOB_FAILED),
    (["ok", "error", "warn"], ExitCode.JOB_FAILED),
    ([], ExitCode.OK),
]


@pytest.mark.parametrize(("statuses", "code"), EXITS)
def test_exit_code_by_worst_status(statuses, code) -> None:
    results = [JobResult(f"j{i}", s in ("ok", "warn"), "", status=s) for i, s in enumerate(statuses)]
    assert runner.exit_code(results) == code
    assert ExitCode.JOB_FAILED not in (ExitCode.BAD_INPUT, ExitCode.CHECK_FAILED)


@pytest.mark.parametrize(("ok", "status", "want_ok", "want_status"), [
    (True, None, True, "ok"), (False, None, False, "findings"), (True, "warn", True, "warn"),
    (False, "error", False, "error"), (True, "findings", False, "findings"),
])
def test_status_and_ok_agree(ok, status, want_ok, want_status) -> None:
    r = JobResult("x", ok, "", status=status)
    assert (r.ok, r.status) == (want_ok, want_status)


def test_verify_skipped_is_a_warning_and_failed_is_a_finding(settings, monkeypatch) -> None:
    from muninn.nightly.jobs import verify
    from muninn.plugins.access import sweep
    from muninn.plugins.access.results import Result

    settings.vault.files = [Path("secrets.yaml")]
    rows = {"skipped": Result("secret", "vpn-db", "skipped", "prerequisite 'vpn' is down", "x", "now"),
            "ok": Result("secret", "nas", "ok", "", "x", "now"),
            "failed": Result("secret", "old", "failed", "401", "x", "now")}
    monkeypatch.setattr(sweep, "plan", lambda s: [])
    for wanted, want in ((["ok", "skipped"], "warn"), (["ok"], "ok"), (["skipped", "failed"], "findings")):
        monkeypatch.setattr(sweep, "run", lambda s, p, who, w=wanted: [rows[k] for k in w])
        result = verify.verify(Context(settings))
        assert result.status == want, wanted
    assert "vpn-db" in json.dumps(result.data["skipped"])


# --- reports ------------------------------------------------------------------------------

def test_only_the_last_n_reports_are_kept_and_last_reads_the_newest(settings, jobs) -> None:
    jobs("t-fine", lambda ctx: JobResult("t-fine", True, "fine"))
    saved = []
    for i in range(5):
        saved.append(runner.save(settings, [JobResult("t-fine", True, f"run {i}")]))
    kept = runner.reports(settings)
    assert kept == saved[-3:]
    path, data = runner.last(settings)
    assert path == saved[-1] and data["jobs"][0]["detail"] == "run 4"


def test_last_without_any_report_is_one_sentence(settings) -> None:
    with pytest.raises(MuninnError, match="no nightly report yet"):
        runner.last(settings)


def _cli(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MUNINN_CONFIG": str(tmp / "muninn.yaml")}
    return subprocess.run([sys.executable, "-m", "muninn", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_cli_last_shows_the_saved_report_as_table_and_json(settings, tmp_path) -> None:
    runner.save(settings, [JobResult("acl-drift", False, "viking://resources/x: extra grant")])
    table = _cli(tmp_path, "nightly", "--last")
    assert table.returncode == 1 and "acl-drift" in table.stdout and "extra grant" in table.stdout
    as_json = _cli(tmp_path, "nightly", "--last", "--json")
    data = json.loads(as_json.stdout)
    assert as_json.returncode == 1 and data["found"] == {"acl-drift": "viking://resources/x: extra grant"}


# --- the lock -----------------------------------------------------------------------------

def test_a_second_run_exits_at_once_naming_the_running_pid(settings, tmp_path) -> None:
    with lock.held(runner.folder(settings) / "lock"):
        out = _cli(tmp_path, "nightly", "--only", "leak-gate")
    assert out.returncode == ExitCode.BUSY
    assert f"PID {os.getpid()}" in out.stderr and "Traceback" not in out.stderr
    assert not runner.reports(settings), "the refused run must not write a report"


def test_a_stale_lock_of_a_dead_pid_is_taken_over(settings, tmp_path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    path = runner.folder(settings) / "lock"
    path.parent.mkdir(parents=True)
    path.write_text(dead.stdout)
    out = _cli(tmp_path, "nightly", "--only", "leak-gate", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["jobs"][0]["name"] == "leak-gate"


def test_the_lock_is_released_after_a_run_and_after_a_crash(settings) -> None:
    path = runner.folder(settings) / "lock"
    with pytest.raises(RuntimeError), lock.held(path):
        raise RuntimeError("job runner died")
    with lock.held(path):
        assert path.read_text().strip() == str(os.getpid())


# --- retired values: the hash scan --------------------------------------------------------

def _scanner(tmp_path: Path, values: dict[str, str], live: tuple[str, ...] = ()) -> retired.HashScanner:
    ledger = retired.Ledger(tmp_path / "ledger.json")
    ledger.remember((i, v) for i, v in values.items())
    return ledger.retired(live)


HIDDEN = [
    ("bare", "{v}", 1),
    ("after-equals", "TOKEN={v}", 1),
    ("in-url", "see https://bot:{v}@api.example.net/x", 1),
    ("table-cell", "| bot | {v}|", 1),
    ("glued", "xx{v}yy", 1),
    ("quoted", 'token: "{v}"', 1),
    ("later-line", "first line\n\nsecond: {v}\n", 3),
    ("end-no-newline", "line\n{v}", 2),
    ("twice", "{v} and {v}", 1),
]


@pytest.mark.parametrize(("name", "template", "line"), HIDDEN, ids=[h[0] for h in HIDDEN])
def test_a_retired_value_is_found_wherever_it_sits(tmp_path, name, template, line) -> None:
    scanner = _scanner(tmp_path, {"old-bot": SECRET})
    text = template.format(v=SECRET)
    hits = scanner.scan(text)
    assert hits and {h.secret_id for h in hits} == {"old-bot"}
    assert hits[0].line == line
    assert all(text[h.start:h.end] == SECRET for h in hits)
    assert len(hits) == text.count(SECRET)


NOT_HITS = [
    "the bot token was rotated on Monday",
    SECRET[:-1],                        # one character short
    SECRET[1:] + "X",                   # shifted
    "",
]
# A rotated value's case-changed and split copies are still the value (issue 31 §6: the folded view).
FOLDED_HITS = [SECRET.lower(), SECRET.upper(), SECRET[:8] + " " + SECRET[8:], SECRET[:5] + "**" + SECRET[5:]]


@pytest.mark.parametrize("text", NOT_HITS)
def test_near_misses_are_not_hits(tmp_path, text) -> None:
    assert _scanner(tmp_path, {"old-bot": SECRET}).scan(text) == []


@pytest.mark.parametrize("text", FOLDED_HITS)
def test_case_changed_and_split_copies_are_hits(tmp_path, text) -> None:
    assert [h.secret_id for h in _scanner(tmp_path, {"old-bot": SECRET}).scan(text)] == ["old-bot"]


def test_a_passphrase_with_spaces_is_found_and_live_values_are_left_to_the_gate(tmp_path) -> None:
    phrase = "correct horse battery staple"
    scanner = _scanner(tmp_path, {"wifi": phrase, "live": SECRET}, live=(SECRET,))
    assert [h.secret_id for h in scanner.scan(f"wifi: {phrase}\nlive {SECRET}")] == ["wifi"]
    assert len(scanner) == 1


def test_the_ledger_holds_no_value_is_private_and_keeps_its_salt(tmp_path) -> None:
    ledger = retired.Ledger(tmp_path / "ledger.json")
    assert ledger.remember([("a", SECRET), ("b", "Another1Value99")]) == 2
    assert ledger.remember([("a", SECRET)]) == 0
    text = (tmp_path / "ledger.json").read_text()
    assert SECRET not in text and "Another1Value99" not in text
    assert (tmp_path / "ledger.json").stat().st_mode & 0o777 == 0o600
    again = retired.Ledger(tmp_path / "ledger.json")
    assert again.salt == ledger.salt and again.retired([]).scan(SECRET)[0].secret_id == "a"


def test_vault_sync_feeds_the_ledger_with_the_values_it_replaces(tmp_path, isolated_keyring) -> None:
    from muninn.plugins.access.vault import Vault

    secrets = tmp_path / "secrets.yaml"
    secrets.write_text(f"- id: bot\n  service: chat\n  value: {SECRET}\n")
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), "vault": {"files": [str(secrets)]},
                                   "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"}}))
    s = config.load(cfg)
    Vault(s).sync()
    secrets.write_text("- id: bot\n  service: chat\n  value: N3wR0tatedV4lue77\n")
    Vault(s).sync()
    scanner = retired.Ledger(s.paths.retired_hashes).retired(["N3wR0tatedV4lue77"])
    assert [h.secret_id for h in scanner.scan(f"old token {SECRET}")] == ["bot"]


# --- purge helpers ------------------------------------------------------------------------

@pytest.mark.parametrize(("answers", "calls", "raises"), [
    ([ServerError("write x failed: path busy (CONFLICT)")] * 2 + ["done"], 3, None),
    ([ServerError("batch write failed with HTTP 409", status=409), "done"], 2, None),
    ([AuthError("refused for key k")], 1, AuthError),
    ([ServerError("disk full")], 1, ServerError),
    ([ServerError("resource is busy")] * 7, 7, ServerError),
])
def test_busy_answers_are_retried_with_backoff_others_are_not(answers, calls, raises) -> None:
    seen, slept = [], []

    def fn():
        answer = answers[len(seen)]
        seen.append(answer)
        if isinstance(answer, Exception):
            raise answer
        return answer

    if raises:
        with pytest.raises(raises):
            purge.retry_busy(fn, sleep=slept.append)
    else:
        assert purge.retry_busy(fn, sleep=slept.append) == "done"
    assert len(seen) == calls
    assert slept == list(purge.BACKOFF[:len(slept)]) and slept == sorted(slept)


def test_redaction_covers_retired_spans_and_live_values(tmp_path) -> None:
    from muninn.guards.redact.redactor import Redactor

    scanner = _scanner(tmp_path, {"old-bot": SECRET})
    text = f"old {SECRET} new Live9Value9Token77 and {SECRET}"
    hits = scanner.scan(text)
    finding = server_scan.FileFinding("viking://x", "acc", ["cli"], [
        {"reason": "retired-value", "secret_id": h.secret_id, "line": h.line, "start": h.start, "end": h.end}
        for h in hits])
    out = purge.redacted(text, finding, Redactor({"Live9Value9Token77": "live"}))
    assert SECRET not in out and "Live9Value9Token77" not in out
    assert out.count("[REDACTED:old-bot]") == 2 and "[REDACTED:live]" in out


# --- backups ------------------------------------------------------------------------------

def test_only_the_last_n_backups_are_kept_and_they_are_private(settings, tmp_path) -> None:
    from muninn.nightly.backup import make as backup

    settings.nightly.keep_backups, settings.nightly.keep_weekly_backups = 2, 0
    made = [backup.create(settings).path for _ in range(4)]
    kept = backup.listing(settings)
    assert kept == made[-2:]
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in kept)
    assert "account list: no root key in the keyring" in backup.create(settings).skipped


def _named(day: str) -> Path:
    return Path(f"muninn-backup-{day}T031500.000000Z.mbk")


@pytest.mark.parametrize(("days", "daily", "weekly", "kept"), [
    # 3 weeks of nightly backups (Mon 2 Nov 2026 .. Sun 22 Nov): the last nights, and each week's newest
    # for the last weeks (each rule counted on its own, as restic does).
    ([f"202611{d:02d}" for d in range(2, 23)], 3, 2, ["20261115", "20261120", "20261121", "20261122"]),
    ([f"202611{d:02d}" for d in range(2, 23)], 3, 0, ["20261120", "20261121", "20261122"]),
    ([f"202611{d:02d}" for d in range(2, 23)], 1, 5, ["20261108", "20261115", "20261122"]),
    ([f"202611{d:02d}" for d in range(2, 23)], 0, 1, ["20261122"]),
    (["20261102", "20261103"], 7, 4, ["20261102", "20261103"]),
    ([], 7, 4, []),
])
def test_retention_keeps_n_daily_and_m_weekly_backups(days, daily, weekly, kept) -> None:
    from muninn.nightly.backup import make as backup

    paths = [_named(d) for d in days]
    gone = backup.expired(paths, daily, weekly)
    assert sorted(set(paths) - set(gone)) == [_named(d) for d in kept]


def test_restoring_an_area_the_backup_does_not_hold_names_the_ones_it_does(settings) -> None:
    from muninn.nightly.backup import make as backup

    made = backup.create(settings)
    with pytest.raises(MuninnError, match="holds no area viking://resources/x"):
        backup.restore(settings, made.path, "viking://resources/x")


@pytest.mark.parametrize(("entries", "parsed"), [
    (["triage"], {"triage": None}),
    (["triage@sha256:ABCD"], {"triage": "abcd"}),
    (["a", "b@sha256:01"], {"a": None, "b": "01"}),
    ([], {}),
])
def test_approved_skills_are_names_optionally_pinned_by_content(entries, parsed) -> None:
    from muninn.nightly.skills import parse_approved

    assert parse_approved(entries) == parsed


def test_a_backup_with_the_server_down_keeps_the_local_parts_and_says_what_is_missing(settings) -> None:
    from muninn.core import credentials
    from muninn.nightly.backup import make as backup

    # A root key but nothing listening on the configured port: the account list cannot be read.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        settings.server.port = sock.getsockname()[1]
    credentials.for_server(settings).set(credentials.root_key_name(), "not-a-real-key")
    made = backup.create(settings)
    assert made.path.exists()
    assert any(s.startswith("account list: OpenViking is not reachable") for s in made.skipped), made.skipped
