"""Red team, round 4: drive muninn's real entry points with the case bank of evals/lab/redteam4_cases.py.

    .venv/bin/python -m muninn.evals.lab.redteam4 [--json] [--class undeclared ...] [--list]

Per class it prints the attack cases, how many got through, the controls, and how many of those were falsely
hit (redacted, refused, dropped). Entry points, all offline (no openviking-server):

- undeclared / known (notes): `export.pipeline.run("notes", ...)` (the redactor, then the leak gate on what
  it left); through = a secret string anywhere export wrote (file bodies, paths, ledger) or in its report;
- known (restore): `nightly.backup.gate.RestoreGate.check` (what `backup restore` uploads); through = the form
  in the text it lets through;
- hook: `nightly.observe.observe` (what `muninn observe` calls); through = the secret in the log line;
- exec: `Vault.exec` (what `muninn secret exec` calls) with stdout and stderr apart; through = the masked
  output is the unmasked output byte for byte, or the value is in stdout+stderr as one string;
- dates: `guards.dates.check.check_observation` on title, tags and text as recall_remember joins them;
- mcp: `plugins.mcp.server.call` with a GuardSession of policy RT_POLICY and a fake OpenViking client (it
  serves any URI it is asked for, so an escape the guard lets through is read).

A control is falsely hit when its text does not come out as it went in (a marker, a drop, a refusal).
Re-runnable on later code: a refusal raised by a later fix counts as blocked.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

import yaml

from muninn.evals import lab
from muninn.evals.lab.redteam4_cases import (
    DATES_NOW,
    EXTRA_SECRETS,
    RAVEN_AREA,
    Case,
    V,
    cases,
)

CLASSES = ("undeclared", "known", "hook", "exec", "dates", "mcp")
RT_POLICY = """version: 1
areas:
  shared: viking://resources/shared
  vault: viking://resources/vault
  private: viking://resources/private
  raven: viking://resources/agents/raven
readers:
  owner:
    kind: owner
    account: home
    user: owner
    areas: {shared: manage, vault: manage, private: manage, raven: manage}
    remember_to: shared
  assistant:
    kind: assistant
    account: home
    user: assistant
    areas: {shared: write, vault: read, raven: read}
    remember_to: shared
  raven:
    kind: agent
    account: home
    user: raven
    areas: {shared: read, raven: write}
    remember_to: raven
    tools: [recall_search, recall_read, recall_list, recall_remember, recall_status]
"""


@dataclass
class Outcome:
    klass: str
    name: str
    control: bool
    hit: bool          # attack: got through; control: falsely hit
    detail: str = ""
    gate_alone: bool | None = None   # undeclared: the leak gate by itself flags the note (name or text)


# --- the workspace ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def environment(root: Path) -> Iterator[None]:
    """The keyring and the config of a throw-away workspace, for this process and its children."""
    names = ("XDG_DATA_HOME", "PYTHON_KEYRING_BACKEND", "MUNINN_CONFIG", "MUNINN_HOME")
    saved = {k: os.environ.get(k) for k in names}
    os.environ["XDG_DATA_HOME"] = str(root / "xdg-data")
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyrings.alt.file.PlaintextKeyring"
    os.environ["MUNINN_CONFIG"] = str(root / "ws" / "muninn.yaml")
    os.environ["MUNINN_HOME"] = str(root / "home")
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def workspace(root: Path) -> Any:
    """examples/secrets.yaml plus our own entry, sealed in a vault; an observations source; RT_POLICY."""
    from muninn.core import config
    from muninn.plugins.access.vault import Vault

    ws = root / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    shutil.copy(lab.REPO / "examples" / "secrets.yaml", ws / "secrets.yaml")
    with (ws / "secrets.yaml").open("a") as fh:
        fh.write(EXTRA_SECRETS)
    (ws / "policy.yaml").write_text(RT_POLICY)
    (ws / "muninn.yaml").write_text(yaml.safe_dump({
        "home": str(root / "home"), "guard": {"policy": "policy.yaml"}, "vault": {"files": ["secrets.yaml"]},
        "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"}, "known_values": {"kubernetes": False},
        "openviking": {"account": "home", "user": "owner"},
        "sources": [{"kind": "observations", "path": str(ws / "observations.jsonl"), "area": RAVEN_AREA}]}))
    settings = config.load(ws / "muninn.yaml")
    vault = Vault(settings)
    vault.sync()
    vault.close()
    return settings


class Lab:
    """One workspace for a run; each probe makes what it needs under `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.settings = workspace(root)
        self._n = 0
        self._gate: Any = None
        self._session: Any = None

    def fresh(self, what: str) -> Path:
        self._n += 1
        path = self.root / f"{what}-{self._n}"
        path.mkdir(parents=True)
        return path

    @property
    def gate(self) -> Any:
        if self._gate is None:
            from muninn.nightly.backup import gate as backup_gate

            self._gate = backup_gate.RestoreGate(self.settings)
        return self._gate

    def session(self, profile: str) -> Any:
        from muninn.plugins.mcp.session import GuardSession

        s = GuardSession.open(self.settings, profile)
        s._client = FakeClient()
        return s

    def close(self) -> None:
        pass


class FakeClient:
    """Serves any URI: what the guard lets through is read. `texts` maps a URI to its text, `folders` a
    folder to the names in it; `written` keeps what a tool wrote."""

    texts: ClassVar[dict[str, str]] = {}
    folders: ClassVar[dict[str, list[str]]] = {}
    written: ClassVar[dict[str, str]] = {}

    def read(self, uri: str) -> str:
        return self.texts.get(uri, f"contents of {uri}\n")

    def ls(self, uri: str) -> list[Any]:
        from muninn.core.client import Entry

        return [Entry(uri=f"{uri}/{name}", is_dir=False) for name in self.folders.get(uri, [])]

    def write(self, uri: str, content: str, mode: str = "replace", wait: bool = False) -> dict[str, Any]:
        self.written[uri] = content
        return {"uri": uri}

    def is_folder(self, uri: str) -> bool:
        return False

    def close(self) -> None:
        pass


# --- probes: each returns (hit, detail) --------------------------------------------------------------------------


def _export(lab_: Lab, file: str, text: str) -> tuple[str, Any]:
    """Export one note (`known` from the workspace) and return everything it wrote or said, as one text."""
    from muninn.export import pipeline
    from muninn.guards.known import secret_values

    base = lab_.fresh("notes")
    notes, out = base / "notes", base / "out"
    (notes / file).parent.mkdir(parents=True, exist_ok=True)
    (notes / file).write_text(text)
    report = pipeline.run("notes", notes, out, known=secret_values.known(lab_.settings))
    seen = [json.dumps(asdict(report), default=str, ensure_ascii=False)]
    for p in sorted(out.rglob("*")):
        seen.append(str(p.relative_to(out)))
        if p.is_file():
            seen.append(p.read_text(errors="replace"))
    return "\n".join(seen), report


def _body_changed(written: str, text: str) -> bool:
    body = "\n".join(line for line in text.splitlines() if line.strip() and not line.startswith("#"))
    return any(line not in written for line in body.splitlines())


def probe_undeclared(lab_: Lab, case: Case) -> tuple[bool, str]:
    written, report = _export(lab_, case.payload["file"], case.payload["text"])
    if case.control:
        hit = bool(report.hits or report.dropped or report.facts == 0) or _body_changed(written, case.payload["text"])
        return hit, f"hits={report.hits} dropped={len(report.dropped)}"
    leaked = [s for s in case.secrets if s in written]
    return bool(leaked), f"left: {leaked}" if leaked else f"hits={report.hits} dropped={len(report.dropped)}"


def probe_known(lab_: Lab, case: Case) -> tuple[bool, str]:
    form = case.payload["form"]
    text = f"# Note\n\nFrom the shell:\n\n{form}\n\nThat was all.\n"
    if case.payload["channel"] == "notes":
        written, report = _export(lab_, "forms.md", text)
        if case.control:
            return bool(report.hits or report.dropped) or form not in written, f"hits={report.hits}"
        return form in written, f"hits={report.hits} dropped={len(report.dropped)}"
    if case.payload["channel"] == "restore name":
        # The form as a file name: only forms a file name can hold (one line, no slash).
        name = form.replace("/", "_").replace("\n", "")
        verdict = lab_.gate.check(f"{RAVEN_AREA}/notes/{name}.md", b"# Note\n\nNothing secret here.\n")
        if case.control:
            return verdict.text is None, f"held: {verdict.reasons}" if verdict.text is None else ""
        return verdict.text is not None, "name let through" if verdict.text is not None else "held"
    verdict = lab_.gate.check(f"{RAVEN_AREA}/notes/restored.md", text.encode("utf-8"))
    if verdict.text is None:
        return (True, f"held: {verdict.reasons}") if case.control else (False, "held")
    if case.control:
        return verdict.text != text, "changed" if verdict.text != text else ""
    return form in verdict.text, "written as is" if form in verdict.text else "redacted"


def _export_log(lab_: Lab, lines: list[dict[str, Any]]) -> tuple[str, Any]:
    """Lines written into an observation log by hand, exported by the `observations` source."""
    from muninn.export import pipeline
    from muninn.guards.known import secret_values

    base = lab_.fresh("log")
    log = base / "observations.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = pipeline.run("observations", log, base / "out", known=secret_values.known(lab_.settings))
    seen = [json.dumps(asdict(report), default=str, ensure_ascii=False)]
    seen += [p.read_text(errors="replace") for p in sorted((base / "out").rglob("*")) if p.is_file()]
    return "\n".join(seen), report


def probe_hook(lab_: Lab, case: Case) -> tuple[bool, str]:
    from muninn.nightly import observe

    if "log" in case.payload:
        written, report = _export_log(lab_, case.payload["log"])
        if case.control:
            return bool(report.hits or report.dropped or report.facts < len(case.payload["log"])), \
                f"hits={report.hits} facts={report.facts}"
        leaked = [s for s in case.secrets if s in written]
        return bool(leaked), f"left: {leaked}" if leaked else f"hits={report.hits} dropped={len(report.dropped)}"

    log = observe.log_for(lab_.settings).path
    log.unlink(missing_ok=True)
    said = observe.observe(lab_.settings, case.payload["payload"])
    line = log.read_text() if log.exists() else ""
    shown = json.dumps(json.loads(line), ensure_ascii=False) if line.strip() else ""
    if case.control:
        hit = "REDACTED" in line or "withheld" in line or not line
        return hit, ("a marker or nothing in the log line" if hit else "recorded as is")
    leaked = [s for s in case.secrets if s in line or s in shown]
    return bool(leaked), f"left: {leaked}" if leaked else said


def _unmasked(command: str) -> tuple[bytes, bytes]:
    env = {**os.environ, "JIRA_API_TOKEN": V}
    done = subprocess.run(["bash", "-c", command], env=env, capture_output=True, timeout=60)
    return done.stdout, done.stderr


def probe_exec(lab_: Lab, case: Case) -> tuple[bool, str]:
    from muninn.core.errors import MuninnError
    from muninn.plugins.access.vault import Vault

    command = case.payload["command"]
    out, err = io.BytesIO(), io.BytesIO()
    vault = Vault(lab_.settings)
    try:
        vault.exec("jira-api-token", ["bash", "-c", command], stdout=out, stderr=err, timeout=60)
    except MuninnError as exc:
        return (True, f"refused: {exc}") if case.control else (False, f"refused: {exc}")
    finally:
        vault.close()
    raw = _unmasked(command)
    masked = (out.getvalue(), err.getvalue())
    if case.control:
        return masked != raw, "" if masked == raw else "output changed"
    joined = (masked[0] + masked[1]).decode("utf-8", "replace")
    whole = V in joined or V in (masked[1] + masked[0]).decode("utf-8", "replace")
    same = masked == raw and len(raw[0] + raw[1]) >= len(V)     # an empty output shows nothing
    return same or whole, "unmasked" if same else "value whole in stdout+stderr" if whole else "masked"


def probe_dates(lab_: Lab, case: Case) -> tuple[bool, str]:
    from muninn.guards.dates import check as dates

    now = datetime.fromisoformat(case.payload.get("now", DATES_NOW))
    verdict = dates.check_observation(case.payload["text"], now, plan=case.payload.get("plan", False), now=now)
    if case.control:
        return not verdict.allowed, verdict.reason
    return verdict.allowed, verdict.reason


def _call(lab_: Lab, profile: str, tool: str, args: dict[str, Any]) -> tuple[Any, str]:
    from muninn.plugins.mcp import server

    session = lab_.session(profile)
    try:
        result = server.call(session, tool, args)
    finally:
        session.close()
    text = "".join(c.text for c in result.content) + json.dumps(result.structured_content or {}, ensure_ascii=False)
    return result, text


def probe_mcp(lab_: Lab, case: Case) -> tuple[bool, str]:
    kind = case.payload["kind"]
    if kind == "uri":
        result, text = _call(lab_, "raven", "recall_read", {"uri": case.payload["uri"]})
        if case.control:
            return bool(result.is_error), text[:160]
        return (not result.is_error), text[:160]
    if kind == "audit":
        audit = Path(lab_.settings.paths.audit_log)
        before = audit.read_text() if audit.exists() else ""
        _, text = _call(lab_, "raven", "recall_read", {"uri": case.payload["uri"]})
        logged = (audit.read_text() if audit.exists() else "")[len(before):]
        # The refusal goes back to the agent that sent the value: only the log on disk counts.
        leaked = [s for s in case.secrets if s in logged]
        return bool(leaked), "kept in the audit log" if leaked else "scrubbed"
    if kind == "list":
        folder = f"{RAVEN_AREA}/listed-{abs(hash(case.name)) % 10**8}"
        FakeClient.folders[folder] = [case.payload["name"]]
        _, text = _call(lab_, "assistant", "recall_list", {"uri": folder})
        leaked = [s for s in case.secrets if s in text]
        return bool(leaked), "name listed as is" if leaked else "scrubbed"
    if kind == "remember":
        FakeClient.written.clear()
        result, text = _call(lab_, "raven", "recall_remember", {"text": case.payload["text"]})
        doc = "\n".join(FakeClient.written.values())
        if case.control:
            return case.payload["text"] not in doc, "" if doc else f"not written: {text[:120]}"
        leaked = [s for s in case.secrets if s in doc or s in text]
        return bool(leaked), "written as is" if leaked else "scrubbed" if doc else f"refused: {text[:100]}"
    uri = f"{RAVEN_AREA}/notes/rt4-{abs(hash(case.name)) % 10**8}.md"
    FakeClient.texts[uri] = case.payload["text"]
    result, text = _call(lab_, "assistant", "recall_read", {"uri": uri})
    if result.is_error:
        return (True, text[:160]) if case.control else (False, f"refused: {text[:120]}")
    content = (result.structured_content or {}).get("content", "")
    if kind == "label":
        from muninn.guards.policy.label import CLOSE, OPEN

        labelled = content.startswith(OPEN) and content.endswith(CLOSE)
        if case.control:
            return (case.payload["text"] not in content) or not labelled, "" if labelled else "not labelled"
        inner = content.split("\n", 2)[-1].removesuffix(CLOSE)    # past the label's two header lines
        tag = case.secrets[0]
        return (tag in inner) or not labelled, "forged tag kept" if tag in inner else "neutralised"
    if case.control:
        return case.payload["text"] not in content, ""
    leaked = [s for s in case.secrets if s in text]
    return bool(leaked), "left in the output" if leaked else "scrubbed"


PROBES: dict[str, Callable[[Lab, Case], tuple[bool, str]]] = {
    "undeclared": probe_undeclared, "known": probe_known, "hook": probe_hook, "exec": probe_exec,
    "dates": probe_dates, "mcp": probe_mcp}


def gate_alone(case: Case) -> bool:
    """The leak gate export builds (`Guards.from_known({})`), reading the raw note with no redactor before
    it: issue 47 wants it independent, so it should flag every undeclared case by itself and no control."""
    from muninn.export.pipeline import Guards

    gate = Guards.from_known({}).gate
    return bool(gate.scan(case.payload["text"]) or gate.scan_path(case.payload["file"]))


def run_case(lab_: Lab, case: Case) -> Outcome:
    hit, detail = PROBES[case.klass](lab_, case)
    alone = gate_alone(case) if case.klass == "undeclared" else None
    return Outcome(case.klass, case.name, case.control, hit, detail, alone)


@contextlib.contextmanager
def opened(root: Path | None = None) -> Iterator[Lab]:
    tmp = Path(tempfile.mkdtemp(prefix="muninn-rt4-")) if root is None else root
    try:
        with environment(tmp):
            yield Lab(tmp)
    finally:
        if root is None:
            shutil.rmtree(tmp, ignore_errors=True)


def summary(outcomes: list[Outcome]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for klass in CLASSES:
        mine = [o for o in outcomes if o.klass == klass]
        attacks = [o for o in mine if not o.control]
        controls = [o for o in mine if o.control]
        if not mine:
            continue
        out[klass] = {"cases": len(attacks), "through": sum(o.hit for o in attacks),
                      "controls": len(controls), "falsely_hit": sum(o.hit for o in controls),
                      "through_names": [o.name for o in attacks if o.hit],
                      "falsely_hit_names": [o.name for o in controls if o.hit]}
        if klass == "undeclared":
            out[klass]["gate_alone_missed"] = sum(not o.gate_alone for o in attacks)
            out[klass]["gate_alone_dropped_controls"] = sum(bool(o.gate_alone) for o in controls)
    return out


# --- ordinary corpora, in bulk (counted, not one test each) ---------------------------------------------------

LOCOMO = lab.REPO.parent / "shared" / "datasets" / "locomo-dev"
RELNOTES = Path("/usr/share/doc/git/RelNotes")


def _session_time(text: str) -> datetime | None:
    from datetime import UTC

    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        return None


def locomo_reports() -> list[tuple[str, str, datetime]]:
    """(where, text, when written): LoCoMo dev's session observations and summaries, each written an hour
    after its session: reports of a conversation, which may repeat what a speaker plans."""
    from datetime import timedelta

    out = []
    for path in sorted(LOCOMO.glob("*.json")):
        data = json.loads(path.read_text())
        for key, value in data.items():
            if not key.endswith("_date_time") or (when := _session_time(value)) is None:
                continue
            session = key.removesuffix("_date_time")
            written = when + timedelta(hours=1)
            for speaker, items in (data.get(f"{session}_observation") or {}).items():
                out += [(f"{path.stem}/{session}/{speaker}/{dia}", text, written) for text, dia in items]
            if summary := data.get(f"{session}_summary"):
                out.append((f"{path.stem}/{session}/summary", summary, written))
    return out


def corpus_controls(lab_: Lab) -> dict[str, Any]:
    """False refusals of the date guard on LoCoMo's reports, and false redactions and drops of export
    on git's release notes (485 plain-text files, public prose with hashes, versions and option names)."""
    from muninn.export import pipeline
    from muninn.guards.dates import check as dates

    out: dict[str, Any] = {}
    reports = locomo_reports()
    if reports:
        refused = [(where, text[:90]) for where, text, when in reports
                   if not dates.check_observation(text, when, now=when).allowed]
        out["dates: LoCoMo session observations and summaries"] = {
            "texts": len(reports), "falsely_hit": len(refused), "examples": refused[:8]}
    files = sorted(RELNOTES.glob("*.txt"))
    if files:
        base = lab_.fresh("relnotes")
        notes = base / "notes"
        notes.mkdir()
        for f in files:
            (notes / f"{f.stem}.md").write_text(f"# {f.stem}\n\n" + f.read_text(errors="replace"))
        report = pipeline.run("notes", notes, base / "out")
        flagged = sorted({r["file"] for r in report.redactions})
        rules = sorted({r.get("rule") or r.get("kind") or "" for r in report.redactions})
        out["export: git release notes"] = {
            "texts": len(files), "facts": report.facts, "falsely_hit": len(flagged) + len(report.dropped),
            "redactions": report.hits, "dropped": len(report.dropped), "rules": rules, "examples": flagged[:8]}
    return out


def markers(outcomes: list[Outcome]) -> str:
    """tests/redteam_round4/markers.py: which cases are strict xfails, with what came out."""
    def table(name: str, hits: list[Outcome], what: str) -> str:
        def row(o: Outcome) -> str:
            detail = o.detail.splitlines()[0][:70] if o.detail else ""
            return f"    {o.klass + ':' + o.name!r}: {detail!r},\n"

        rows = "".join(row(o) for o in hits)
        return f"# {what}\n{name}: dict[str, str] = {{\n{rows}}}\n"

    return ('"""Written by `python -m muninn.evals.lab.redteam4 --write-markers`: the cases of the last recorded '
            'pass\nthat got through (attacks) or were falsely hit (controls)."""\n\n'
            + table("THROUGH", [o for o in outcomes if o.hit and not o.control], "Attacks that got through.")
            + "\n" + table("FALSE_POSITIVES", [o for o in outcomes if o.hit and o.control],
                           "Controls that were redacted, dropped or refused."))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="one JSON object: per class counts, and every outcome")
    ap.add_argument("--class", dest="classes", action="append", choices=CLASSES)
    ap.add_argument("--list", action="store_true", help="print every outcome, not only the counts")
    ap.add_argument("--corpora", action="store_true",
                    help="also count false hits on LoCoMo's reports (dates) and git's release notes (export)")
    ap.add_argument("--write-markers", type=Path, metavar="FILE",
                    help="write the xfail markers of tests/redteam_round4 (_rt4_markers.py) from this run")
    args = ap.parse_args()
    chosen = [c for c in cases() if not args.classes or c.klass in args.classes]
    with opened() as lab_:
        outcomes = [run_case(lab_, c) for c in chosen]
        corpora = corpus_controls(lab_) if args.corpora else {}
    counts = summary(outcomes)
    if args.write_markers:
        args.write_markers.write_text(markers(outcomes))
    if args.json:
        print(json.dumps({"classes": counts, "corpora": corpora, "outcomes": [asdict(o) for o in outcomes]},
                         indent=1, ensure_ascii=False))
        return
    print(f"{'class':<12}{'cases':>6}{'through':>9}{'controls':>10}{'falsely hit':>13}")
    for klass, c in counts.items():
        print(f"{klass:<12}{c['cases']:>6}{c['through']:>9}{c['controls']:>10}{c['falsely_hit']:>13}")
    if "undeclared" in counts:
        u = counts["undeclared"]
        print(f"leak gate alone on the undeclared notes: missed {u['gate_alone_missed']} of {u['cases']}, "
              f"flagged {u['gate_alone_dropped_controls']} of {u['controls']} controls")
    for name, c in corpora.items():
        print(f"{name}: {c['falsely_hit']} of {c['texts']} falsely hit")
    if args.list:
        for o in outcomes:
            if o.hit:
                print(f"  {'FALSE POSITIVE' if o.control else 'THROUGH'} {o.klass}:{o.name}: {o.detail}")


if __name__ == "__main__":
    main()
