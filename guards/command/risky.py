"""Is a shell command risky: does it write, delete, restart, deploy or change a credential?

    risk = classify("sudo kubectl --context prod rollout restart deploy/api")
    risk.program, risk.verb, risk.why, risk.context   # kubectl, rollout restart, restarts..., [prod, deploy/api]

The other half of the command guard: `guard.py` allows a few proven reads for `verify` and refuses the
rest; this names the acts worth a look at memory first (Claude Code's PreToolUse hook asks it before every
Bash call, so it imports only `re` and must answer in well under a millisecond). It never blocks anything:
a command it cannot read is harmless to it (None), and everything it calls risky only leads to a search.

How it reads a line, and why:
- The line is split as bash would split it into simple commands (`;`, `&&`, `||`, `|`, `&`, newlines,
  subshells, `$(...)` and backticks, heredocs), so a risky part anywhere in a chain or pipeline counts.
- Wrappers are looked through (`sudo`, `env`, `nohup`, `timeout`, `xargs`, `bash -c`, `ssh HOST CMD`,
  `kubectl exec -- CMD`, `find -exec`...): the act is the command they run.
- Each known program has a verb table (PROGRAMS): its verbs that act and those that only read, the options
  that take a value (so `-n prod get` reads `get` as the verb) and a default for verbs it does not list.
  Then generic rules: SQL handed to a database client is judged by its statements; a redirection or a
  copy onto a system path writes it; a program or make target named for a deploy, a teardown or a
  migration is one.
"""

from __future__ import annotations

import re


class _Lazy:
    """A pattern compiled at its first use: the hook imports this module before every Bash call, and most
    calls never reach the cloud, SQL or naming rules (compiling them all costs more than a classification)."""

    __slots__ = ("args", "compiled")

    def __init__(self, *args: object) -> None:
        self.args = args
        self.compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> object:
        if self.compiled is None:
            self.compiled = re.compile(*self.args)  # type: ignore[call-overload]
        return getattr(self.compiled, name)


# --- the risk --------------------------------------------------------------------------------------------


class Risk:
    """What makes a command risky: the program, its verb, one sentence, and the words that say where."""

    __slots__ = ("context", "program", "verb", "why")

    def __init__(self, program: str, verb: str, why: str, context: list[str] | None = None) -> None:
        self.program = program
        self.verb = verb
        self.why = why
        self.context = context or []

    def query(self) -> str:
        """Words to search memory with: program and verb first, then hosts, names and paths."""
        words = [self.program, *self.verb.split(), *self.context]
        seen: list[str] = []
        for w in words:
            w = w.strip()
            if w and w not in seen and len(w) <= 120:
                seen.append(w)
        return " ".join(seen[:12])

    def __repr__(self) -> str:
        return f"Risk({self.program!r}, {self.verb!r}, {self.why!r}, {self.context!r})"


# --- splitting a line as bash does -------------------------------------------------------------------------

_KEYWORDS = frozenset({"{", "}", "!", "then", "do", "else", "fi", "done", "esac", "if", "while", "until", "elif"})
_OPS = ("&&", "||", "|&", ";;", ";", "|", "&", "\n", "(", ")")
_REDIRS = ("&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<>", "<&", ">", "<")


class _Cmd:
    __slots__ = ("piped", "redirs", "stdin", "words")

    def __init__(self) -> None:
        self.words: list[str] = []
        self.redirs: list[tuple[str, str]] = []
        self.stdin = ""          # a heredoc's or here-string's text, or what an echo piped in
        self.piped = False       # reads the previous command's output


def _subst(text: str, i: int) -> tuple[str, int]:
    """The inside of `$(...)` starting at text[i] == '(' and the index after its `)`; nesting counted."""
    depth, j = 0, i
    quote = ""
    while j < len(text):
        ch = text[j]
        if quote:
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"':
                j += 1
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return text[i + 1:j], j + 1
        j += 1
    return text[i + 1:], len(text)


def _lex(text: str, inner: list[str]) -> list[tuple[str, str]]:
    """Tokens ('w', word) / ('op', op) / ('r', redirection op); substitutions go to `inner` to be judged."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(text)
    word: list[str] = []
    has_word = False

    def flush() -> None:
        nonlocal word, has_word
        if has_word:
            out.append(("w", "".join(word)))
        word, has_word = [], False

    while i < n:
        ch = text[i]
        if ch in " \t":
            flush()
            i += 1
        elif ch == "#" and not has_word:
            while i < n and text[i] != "\n":
                i += 1
        elif ch == "\\":
            if i + 1 < n and text[i + 1] == "\n":
                i += 2
                continue
            word.append(text[i + 1:i + 2])
            has_word = True
            i += 2
        elif ch == "'":
            end = text.find("'", i + 1)
            end = n if end < 0 else end
            word.append(text[i + 1:end])
            has_word = True
            i = end + 1
        elif ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    word.append(text[j + 1])
                    j += 2
                    continue
                if text.startswith("$(", j):
                    body, j = _subst(text, j + 1)
                    inner.append(body)
                    word.append("$(...)")
                    continue
                if text[j] == "`":
                    end = text.find("`", j + 1)
                    end = n if end < 0 else end
                    inner.append(text[j + 1:end])
                    word.append("`...`")
                    j = end + 1
                    continue
                word.append(text[j])
                j += 1
            has_word = True
            i = j + 1
        elif text.startswith("$(", i) and not text.startswith("$((", i):
            body, i = _subst(text, i + 1)
            inner.append(body)
            word.append("$(...)")
            has_word = True
        elif ch == "`":
            end = text.find("`", i + 1)
            end = n if end < 0 else end
            inner.append(text[i + 1:end])
            word.append("`...`")
            has_word = True
            i = end + 1
        elif ch in "<>" or (ch == "&" and text.startswith(("&>",), i)):
            # `2>` and `2>>`: a file descriptor number just before is part of the redirection.
            if has_word and "".join(word).isdigit():
                word, has_word = [], False
            flush()
            op = next(o for o in _REDIRS if text.startswith(o, i))
            if (ch == "<" and text.startswith("<(", i)) or (ch == ">" and text.startswith(">(", i)):
                body, i = _subst(text, i + 1)   # process substitution: a command of its own
                inner.append(body)
                continue
            out.append(("r", op))
            i += len(op)
        elif any(text.startswith(o, i) for o in _OPS):
            flush()
            op = next(o for o in _OPS if text.startswith(o, i))
            out.append(("op", op))
            i += len(op)
        else:
            word.append(ch)
            has_word = True
            i += 1
    flush()
    return out


def _heredocs(text: str) -> tuple[str, dict[str, str]]:
    """The line without heredoc bodies, and each body by its delimiter (`psql <<SQL` hands SQL over)."""
    bodies: dict[str, str] = {}
    lines = text.split("\n")
    kept: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        kept.append(line)
        i += 1
        for m in re.finditer(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?", line):
            body: list[str] = []
            while i < len(lines) and lines[i].strip() != m.group(1):
                body.append(lines[i])
                i += 1
            i += 1
            bodies[m.group(1)] = "\n".join(body)
    return "\n".join(kept), bodies


def commands(text: str, depth: int = 0) -> list[_Cmd]:
    """Every simple command bash would run for `text`, substitutions and heredoc-fed ones included."""
    if depth > 4 or not text.strip():
        return []
    text, bodies = _heredocs(text[:20000])
    inner: list[str] = []
    cmds: list[_Cmd] = []
    cur = _Cmd()
    tokens = _lex(text, inner)
    i = 0
    while i < len(tokens):
        kind, value = tokens[i]
        if kind == "w":
            if cur.words or value not in _KEYWORDS:   # `if`, `do`, `{`: bash's grammar, not a command
                cur.words.append(value)
        elif kind == "r":
            target = tokens[i + 1][1] if i + 1 < len(tokens) and tokens[i + 1][0] == "w" else ""
            if value in ("<<", "<<-"):
                cur.stdin = bodies.get(target.strip("'\""), "")
            elif value == "<<<":
                cur.stdin = target
            else:
                cur.redirs.append((value, target))
            i += 1 if target else 0
        else:
            if cur.words or cur.redirs:
                cmds.append(cur)
            piped = value in ("|", "|&")
            prev = cur
            cur = _Cmd()
            if piped:
                cur.piped = True
                if prev.words and prev.words[0] in ("echo", "printf", "cat") and not cur.stdin:
                    cur.stdin = prev.stdin or " ".join(prev.words[1:])
        i += 1
    if cur.words or cur.redirs:
        cmds.append(cur)
    for body in inner:
        cmds += commands(body, depth + 1)
    return cmds


# --- paths ---------------------------------------------------------------------------------------------------

_SYSTEM = _Lazy(r"^(?:/(?:etc|usr|bin|sbin|lib|lib32|lib64|boot|opt|srv|root|var/lib|var/spool|var/www|"
                     r"dev/(?!null$|stdout$|stderr$|tty$|fd/)|proc/sys|sys)(?:/|$)|~/\.ssh|~/\.aws|~/\.kube|~/\.gnupg|"
                     r"\$HOME/\.(?:ssh|aws|kube)|~/\.bashrc|~/\.profile|~/\.zshrc|/$)")


def system_path(path: str) -> bool:
    """A path whose overwrite changes the machine (or a credential), not a project or a scratch file."""
    return bool(_SYSTEM.match(path.strip("'\"")))


# --- reading argv ------------------------------------------------------------------------------------------------


def _base(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def positionals(args: list[str], valued: frozenset[str] = frozenset(), stop: int = 4) -> list[str]:
    """The first `stop` words that are not options or an option's value (`valued`: options taking one)."""
    out: list[str] = []
    i = 0
    while i < len(args) and len(out) < stop:
        a = args[i]
        if a == "--":
            out += args[i + 1:i + 1 + stop - len(out)]
            break
        if a.startswith("-") and len(a) > 1:
            if "=" not in a and a in valued:
                i += 1
        else:
            out.append(a)
        i += 1
    return out


def _opt(args: list[str], *names: str) -> str | None:
    """The value of the first of `names` given (`-n x`, `--name x`, `--name=x`, `-nx` for one letter)."""
    for i, a in enumerate(args):
        for name in names:
            if a == name and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(name + "=") and name.startswith("--"):
                return a[len(name) + 1:]
            if len(name) == 2 and a.startswith(name) and len(a) > 2 and not a.startswith("--"):
                return a[2:]
    return None


def _short(args: list[str], letters: str, longs: tuple[str, ...] = ()) -> bool:
    """Any of the short switches `letters` (alone or clustered, `-rf`) or the long ones given."""
    for a in args:
        if a == "--":
            break
        if a in longs or any(a.startswith(x + "=") for x in longs):
            return True
        if a.startswith("-") and not a.startswith("--") and any(c in a[1:] for c in letters):
            return True
    return False


# --- verb tables ----------------------------------------------------------------------------------------------------


class Verbs:
    """A program whose first positional words say what it does. `risky` and `safe` hold verbs of one or two
    words ("rollout restart" before "rollout"); a verb in neither is `default` (True: risky)."""

    __slots__ = ("context", "default", "risky", "safe", "valued", "why")

    def __init__(self, risky: str, safe: str = "", valued: str = "", default: bool = False,
                 why: str = "changes state", context: str = "") -> None:
        self.risky = frozenset(v.strip() for v in risky.split(",") if v.strip())
        self.safe = frozenset(v.strip() for v in safe.split(",") if v.strip())
        self.valued = frozenset(valued.split())
        self.default = default
        self.why = why
        self.context = tuple(context.split())   # options whose value says where (--context, -n, --profile)

    def judge(self, program: str, args: list[str]) -> Risk | None:
        pos = positionals(args, self.valued, 6)
        verb = ""
        risky = self.default
        for size in (3, 2, 1):
            key = " ".join(pos[:size])
            if len(pos) >= size and key in self.risky:
                verb, risky = key, True
                break
            if len(pos) >= size and key in self.safe:
                verb, risky = key, False
                break
        if not pos:
            return None
        if not verb:
            verb = pos[0]
        if not risky:
            return None
        rest = pos[len(verb.split()):len(verb.split()) + 3]
        where = [v for name in self.context if (v := _opt(args, name))]
        return Risk(program, verb, f"{program} {verb} {self.why}", where + rest)


_KUBE_VALUED = ("-n --namespace --context --cluster --user -l --selector -o --output -f --filename -c --container "
                "--kubeconfig -s --server --token --as --as-group -k --kustomize --field-selector --sort-by "
                "--template -L --label-columns --since --tail --type --image --replicas --to-revision --timeout "
                "--request-timeout -p --patch --grace-period")
_READ_KUBE = ("get, describe, logs, top, explain, api-resources, api-versions, version, cluster-info, auth can-i, "
              "auth whoami, config view, config get-contexts, config current-context, config get-clusters, "
              "diff, wait, events, port-forward, proxy, rollout status, rollout history, kustomize, completion, "
              "plugin list, alpha, debug, attach, certificate list, options, help")
_RISKY_KUBE = ("delete, apply, create, replace, patch, edit, scale, autoscale, rollout restart, rollout undo, "
               "rollout pause, rollout resume, set, label, annotate, drain, cordon, uncordon, taint, run, expose, "
               "cp, config use-context, config set-context, config set-credentials, config delete-context, "
               "config set, config unset, config delete-cluster, config delete-user, certificate approve, "
               "certificate deny")

PROGRAMS: dict[str, Verbs] = {
    "kubectl": Verbs(_RISKY_KUBE, _READ_KUBE, _KUBE_VALUED, default=True, why="changes the cluster",
                     context="--context -n --namespace"),
    "oc": Verbs(_RISKY_KUBE + ", adm, new-app, start-build, rollback", _READ_KUBE + ", status, whoami, project, "
                "projects", _KUBE_VALUED, default=True, why="changes the cluster", context="--context -n"),
    "helm": Verbs("install, upgrade, uninstall, delete, rollback, plugin install, plugin uninstall, push, "
                  "repo remove", "list, ls, status, get, history, template, lint, show, inspect, search, "
                  "repo list, repo add, repo update, dependency, version, env, diff, verify, pull, package, help",
                  "-n --namespace --kube-context -f --values --set --version --kubeconfig -o --output --repo",
                  default=False, why="changes a release", context="--kube-context -n --namespace"),
    "terraform": Verbs("apply, destroy, import, taint, untaint, state rm, state mv, state push, "
                       "state replace-provider, force-unlock, workspace delete, refresh",
                       "plan, init, validate, fmt, show, output, graph, providers, version, state list, state show, "
                       "state pull, workspace list, workspace show, workspace select, workspace new, console, "
                       "get, login, logout, test, help, -version", "-chdir -var -var-file -target",
                       why="changes real infrastructure", context="-target"),
    "pulumi": Verbs("up, update, destroy, refresh, import, cancel, stack rm, state delete, stack select",
                    "preview, stack ls, stack, config, logs, whoami, version, about", "-s --stack -C --cwd",
                    why="changes real infrastructure", context="-s --stack"),
    "systemctl": Verbs("start, stop, restart, reload, try-restart, reload-or-restart, enable, disable, mask, "
                       "unmask, kill, daemon-reload, daemon-reexec, isolate, reboot, poweroff, halt, set-property, "
                       "edit, revert, reset-failed, link, preset, set-default, suspend, hibernate, kexec",
                       "status, show, cat, list-units, list-unit-files, list-timers, list-sockets, list-jobs, "
                       "list-dependencies, is-active, is-enabled, is-failed, is-system-running, get-default, "
                       "help, show-environment", "-H --host -M --machine -p --property -t --type --state -n "
                       "--lines -o --output", why="changes a service", context="-H --host"),
    "service": Verbs("start, stop, restart, reload, force-reload, try-restart, condrestart", "status, --status-all",
                     why="changes a service"),
    "docker": Verbs("rm, rmi, kill, stop, restart, pause, unpause, prune, push, system prune, image prune, "
                    "image rm, image push, container rm, container prune, container stop, container kill, "
                    "container restart, volume rm, volume prune, network rm, network prune, builder prune, "
                    "compose down, compose rm, compose stop, compose restart, compose kill, "
                    "compose push, service rm, service update, service scale, service create, stack deploy, "
                    "stack rm, swarm init, swarm leave, swarm join, secret rm, secret create, config rm, "
                    "node rm, node update, update, login, logout, context rm, plugin rm, plugin install",
                    "ps, images, logs, inspect, version, info, stats, top, events, history, port, diff, search, "
                    "build, pull, run, exec, cp, tag, create, start, attach, wait, commit, save, load, export, "
                    "compose ps, compose logs, compose config, compose build, compose pull, compose images, "
                    "compose top, compose ls, compose exec, compose run, compose version, context ls, context use, "
                    "network ls, network inspect, volume ls, volume inspect, image ls, image inspect, "
                    "container ls, container inspect, container logs, system df, system info, buildx, manifest, "
                    "node ls, service ls, service ps, service logs, stack ls, stack ps, secret ls, help",
                    "-H --host --context --file --project-name --filter --format -e --env -v --volume "
                    "--name -w --workdir -u --user --network --platform -t --tag --entrypoint -l --label",
                    why="changes containers or images", context="--context -H -p"),
    "podman": Verbs("rm, rmi, kill, stop, restart, prune, push, system prune, system reset, image prune, "
                    "volume rm, volume prune, pod rm, pod stop, pod kill, pod restart, network rm",
                    "ps, images, logs, inspect, version, info, stats, top, pull, build, run, exec, start, "
                    "pod ps, volume ls, network ls, system df", "--filter --format -f --name -e -v",
                    why="changes containers or images"),
    "git": Verbs("push, reset, clean, filter-branch, filter-repo, reflog expire, update-ref, branch -D, "
                 "stash drop, stash clear, gc, prune, rebase, checkout --, restore, rm, tag -d, "
                 "remote remove, remote rm, remote set-url, lfs prune, worktree remove, replace, "
                 "submodule deinit", "", "-C -c --git-dir --work-tree --namespace", why="rewrites or publishes",
                 context="-C"),
    "gh": Verbs("repo delete, repo archive, repo rename, repo edit, release create, release delete, "
                "release upload, release edit, pr merge, pr close, issue delete, issue close, secret set, "
                "secret delete, variable set, variable delete, workflow run, workflow disable, run cancel, "
                "run rerun, api, auth login, auth logout, auth refresh, ssh-key add, ssh-key delete, gpg-key add, "
                "gpg-key delete, label delete, cache delete, ruleset delete",
                "", "-R --repo", why="changes a repository on GitHub", context="-R --repo"),
    "glab": Verbs("repo delete, release create, release delete, mr merge, mr close, variable set, variable delete, "
                  "auth login, ci run, ci cancel, ci delete", "", "-R --repo", why="changes a GitLab project"),
    "ansible-playbook": Verbs("", "", default=True, why="runs a playbook against hosts"),   # judged below
    "helmfile": Verbs("apply, sync, destroy, delete, charts", "diff, template, lint, list, status, build, repos",
                      "-f --file -e --environment -l --selector", why="changes releases"),
    "argocd": Verbs("app sync, app delete, app rollback, app set, app create, app terminate-op, app patch, "
                    "app actions run, cluster add, cluster rm, repo add, repo rm, proj delete, "
                    "account update-password, login, logout, account generate-token",
                    "app list, app get, app diff, app history, app manifests, app logs, app wait, version, "
                    "cluster list, repo list, proj list, account list, context", "--server --grpc-web-root-path "
                    "-o --output -l --selector --revision", why="changes an Argo CD application"),
    "flux": Verbs("reconcile, suspend, resume, delete, create, bootstrap, uninstall, install",
                  "get, check, logs, tree, trace, export, diff, stats, version, events", "-n --namespace --context",
                  why="changes a Flux object", context="--context -n"),
    "nomad": Verbs("job run, job stop, job revert, job dispatch, job scale, node drain, node eligibility, "
                   "alloc stop, alloc restart, alloc signal, system gc, run, stop, deployment fail, "
                   "deployment promote, acl token create, acl token delete, var put, var purge",
                   "job status, job inspect, job plan, job history, status, node status, alloc status, alloc logs, "
                   "logs, plan, server members, version", "-address -namespace -region -token",
                   why="changes a Nomad job"),
    "consul": Verbs("kv put, kv delete, kv import, acl token create, acl token delete, acl policy create, "
                    "acl policy delete, services register, services deregister, leave, force-leave, snapshot restore, "
                    "reload, maint", "kv get, kv export, members, catalog, info, monitor, version, operator raft "
                    "list-peers, snapshot save", "-http-addr -token -datacenter", why="changes Consul state"),
    "vault": Verbs("write, delete, put, kv put, kv delete, kv destroy, kv metadata delete, kv patch, kv rollback, "
                   "policy write, policy delete, token revoke, token create, lease revoke, secrets enable, "
                   "secrets disable, secrets move, auth enable, auth disable, operator seal, operator unseal, "
                   "operator rekey, operator generate-root, operator step-down, audit enable, audit disable, "
                   "unwrap, login",
                   "read, list, kv get, kv list, kv metadata get, status, token lookup, token capabilities, "
                   "policy read, policy list, secrets list, auth list, audit list, version, print, path-help",
                   "-address -namespace -format -field -mount", why="changes secrets or their policies"),
    "etcdctl": Verbs("put, del, txn, compaction, defrag, snapshot restore, member remove, member add, "
                     "lease revoke, user add, user delete, role add, role delete, auth enable, auth disable, "
                     "move-leader", "get, watch, endpoint health, endpoint status, member list, snapshot save, "
                     "version, check", "--endpoints --cacert --cert --key", why="changes etcd"),
    "redis-cli": Verbs("flushall, flushdb, del, unlink, set, setex, mset, hset, hdel, lpush, rpush, lpop, rpop, "
                       "sadd, srem, zadd, zrem, expire, persist, rename, config set, config rewrite, shutdown, "
                       "debug, cluster reset, cluster forget, cluster failover, replicaof, slaveof, acl setuser, "
                       "acl deluser, script flush, function flush, incr, decr, incrby, xadd, xdel, xtrim, "
                       "FLUSHALL, FLUSHDB, DEL, SET, SHUTDOWN, CONFIG SET",
                       "", "-h -p -a -n -u --user --pass -c --tls --cacert --raw -r -i", default=False,
                       why="changes Redis data", context="-h"),
    "eksctl": Verbs("create, delete, scale, upgrade, drain, set, unset, update, enable, utils", "get, info, version",
                    "--cluster --region -f --config-file --profile", why="changes an EKS cluster",
                    context="--cluster --region"),
    "kind": Verbs("delete, create, load", "get, version, export", "--name", why="changes a kind cluster"),
    "minikube": Verbs("delete, stop, start, addons enable, addons disable", "status, ip, version, profile list, "
                      "service list, logs, addons list", "-p --profile", why="changes a minikube cluster"),
    "virsh": Verbs("destroy, undefine, shutdown, reboot, reset, start, suspend, resume, vol-delete, pool-destroy, "
                   "pool-delete, snapshot-delete, snapshot-revert, net-destroy, net-undefine, define, create, "
                   "setmem, setvcpus, attach-disk, detach-disk, managedsave-remove",
                   "list, dominfo, domstate, dumpxml, vol-list, pool-list, net-list, snapshot-list, version, "
                   "nodeinfo, domifaddr, console", "-c --connect", why="changes a virtual machine"),
    "vagrant": Verbs("destroy, halt, reload, up, provision, box remove, snapshot delete, snapshot restore",
                     "status, global-status, ssh-config, box list, version, ssh, port", "", why="changes a VM"),
    "restic": Verbs("forget, prune, restore, init, key add, key remove, key passwd, unlock, rebuild-index, "
                    "repair, migrate, backup, tag, copy", "snapshots, ls, check, stats, diff, find, cat, "
                    "dump, mount, version, key list, list", "-r --repo --password-file --cache-dir",
                    why="changes a backup repository", context="-r --repo"),
    "borg": Verbs("delete, prune, compact, create, recreate, rename, key change-passphrase, break-lock, "
                  "upgrade, init", "list, info, check, extract, diff, mount, version, key export", "",
                  why="changes a backup repository"),
    "zfs": Verbs("destroy, rollback, rename, set, create, receive, recv, promote, inherit, snapshot, clone, "
                 "unmount, umount, mount", "list, get, holds, version, diff, send", "-o -t -s",
                 why="changes a ZFS dataset"),
    "zpool": Verbs("destroy, create, add, remove, detach, attach, replace, offline, online, export, import, "
                   "clear, scrub, labelclear, upgrade, split, set", "status, list, get, iostat, history, version",
                   "-o", why="changes a ZFS pool"),
    "ufw": Verbs("enable, disable, reset, allow, deny, reject, limit, delete, insert, route, reload, default",
                 "status, show, version, app list", "", why="changes the firewall"),
    "firewall-cmd": Verbs("--reload, --add-port, --remove-port, --add-service, --remove-service, "
                          "--set-default-zone, --runtime-to-permanent, --panic-on", "--list-all, --state", "",
                          default=False, why="changes the firewall"),
    "nft": Verbs("add, delete, flush, insert, replace, create, destroy, -f", "list, monitor, describe, -a", "",
                 why="changes the firewall"),
    "apt": Verbs("install, remove, purge, upgrade, full-upgrade, dist-upgrade, autoremove, reinstall, "
                 "install --reinstall, clean, autoclean, edit-sources", "list, search, show, policy, depends, "
                 "rdepends, changelog, update, download, moo", "-o -t -c", why="changes installed packages"),
    "apt-get": Verbs("install, remove, purge, upgrade, dist-upgrade, autoremove, build-dep, clean, autoclean",
                     "update, download, source, check, changelog", "-o -t -c", why="changes installed packages"),
    "dpkg": Verbs("-i, --install, -r, --remove, -P, --purge, --configure, --unpack, --set-selections",
                  "-l, --list, -L, --listfiles, -s, --status, -S, --search, --print-architecture, -c, --contents",
                  "", why="changes installed packages"),
    "yum": Verbs("install, remove, erase, update, upgrade, downgrade, reinstall, autoremove, groupinstall, "
                 "history undo, history rollback", "list, info, search, provides, repolist, check-update, "
                 "history", "--enablerepo --disablerepo -c", why="changes installed packages"),
    "snap": Verbs("install, remove, refresh, revert, disable, enable, set, unset, stop, restart, start",
                  "list, info, find, services, logs, version, changes, get", "", why="changes installed snaps"),
    "crontab": Verbs("", "", default=False, why="replaces the crontab"),   # judged below
    "npm": Verbs("publish, unpublish, deprecate, dist-tag add, dist-tag rm, owner add, owner rm, access, "
                 "token revoke, token create, adduser, login", "", "--registry -w --workspace",
                 why="publishes a package"),
    "cargo": Verbs("publish, yank, owner", "", "", why="publishes a crate"),
    "twine": Verbs("upload, register", "check", "-r --repository", why="publishes a package"),
    "gsutil": Verbs("rm, rb, mv, rsync, acl set, acl ch, iam set, iam ch, setmeta, retention, defacl set, "
                    "lifecycle set", "ls, cat, du, stat, hash, version, acl get, iam get", "-m -o",
                    why="changes a bucket"),
    "s3cmd": Verbs("del, rm, rb, put, sync, mv, setacl, setpolicy, delpolicy, expire", "ls, la, get, du, info",
                   "-c --config", why="changes a bucket"),
    "mc": Verbs("rm, rb, mv, cp, mirror, admin user add, admin user remove, admin policy set, retention set, "
                "ilm rule add, ilm rule remove", "ls, cat, stat, du, tree, find, admin info, version",
                "--config-dir", why="changes object storage"),
    "heroku": Verbs("apps:destroy, pg:reset, releases:rollback, config:set, config:unset, ps:restart, ps:scale, "
                    "ps:stop, maintenance:on, maintenance:off, run, pg:promote, addons:destroy, access:remove, "
                    "domains:remove, container:release, pg:killall", "apps, logs, ps, config, releases, "
                    "addons, pg:info, domains, status, auth:whoami", "-a --app -r --remote",
                    why="changes a Heroku app", context="-a --app"),
    "flyctl": Verbs("deploy, destroy, apps destroy, scale count, scale vm, secrets set, secrets unset, "
                    "machine destroy, machine stop, machine restart, volumes destroy, releases rollback",
                    "status, logs, apps list, releases, secrets list, machine list, volumes list, version",
                    "-a --app -c --config", why="changes a Fly app", context="-a --app"),
    "cdk": Verbs("deploy, destroy, bootstrap, import, watch", "synth, diff, list, ls, doctor, docs, context, "
                 "metadata", "-c --context --profile -a --app", why="changes a CloudFormation stack"),
    "serverless": Verbs("deploy, remove, rollback", "info, logs, print, package, invoke local", "-s --stage "
                        "-r --region", why="changes a deployed service", context="-s --stage"),
    "sls": Verbs("deploy, remove, rollback", "info, logs, print, package", "-s --stage -r --region",
                 why="changes a deployed service", context="-s --stage"),
    "skaffold": Verbs("run, deploy, delete, dev, apply", "build, render, diagnose, version, fix, inspect, "
                      "config list", "-p --profile -f --filename -n --namespace", why="deploys"),
    "supervisorctl": Verbs("start, stop, restart, reload, shutdown, update, remove, add, clear, signal",
                           "status, avail, pid, tail, version, maintail", "-c -s -u -p", why="changes a program"),
    "pm2": Verbs("start, stop, restart, reload, delete, kill, flush, update, scale, startup, unstartup, save, "
                 "resurrect", "list, ls, status, logs, show, describe, monit, info, jlist, prettylist", "",
                 why="changes a process"),
    "launchctl": Verbs("unload, load, stop, start, kill, bootout, bootstrap, enable, disable, kickstart, remove",
                       "list, print, print-disabled, blame, version", "", why="changes a service"),
    "certbot": Verbs("delete, revoke, renew, certonly, run, install, register, unregister, update_account",
                     "certificates, plugins, --version", "-d --domain --cert-name -m",
                     why="changes certificates", context="-d --cert-name"),
    "openstack": Verbs("", "", "--os-cloud --os-project-name -f --format -c --column", default=False,
                       why="changes cloud resources"),   # verbs judged like aws's below
    "doctl": Verbs("", "", "-t --access-token -o --output --context", why="changes cloud resources"),
    "az": Verbs("", "", "-g --resource-group -n --name --subscription -o --output --query -l --location",
                why="changes Azure resources"),
    "gcloud": Verbs("", "", "--project --zone --region --format --filter --account --configuration --limit",
                    why="changes Google Cloud resources"),
    "aws": Verbs("", "", "--profile --region --output --query --endpoint-url --cli-input-json --color",
                 why="changes AWS resources"),
    "kubeadm": Verbs("reset, init, join, upgrade apply, upgrade node, certs renew, token create, token delete",
                     "version, upgrade plan, certs check-expiration, token list, config view, config print", "",
                     why="changes a cluster's control plane"),
    "mysqladmin": Verbs("drop, create, shutdown, flush-privileges, flush-hosts, flush-logs, kill, password, "
                        "reload, refresh", "status, ping, version, processlist, variables, extended-status",
                        "-h -u -p -P --host --user -S", why="changes a MySQL server", context="-h --host"),
    "nginx": Verbs("-s", "-t, -T, -v, -V", "-c -g -p", why="signals the web server"),
    "apachectl": Verbs("restart, graceful, stop, start, graceful-stop, -k", "configtest, -t, -S, -M, -v, status",
                       "-f -d", why="signals the web server"),
}
for _alias, _same in (("k", "kubectl"), ("tofu", "terraform"), ("terragrunt", "terraform"), ("fly", "flyctl"),
                      ("docker-compose", None), ("dnf", "yum"), ("microk8s.kubectl", "kubectl"),
                      ("aptitude", "apt")):
    if _same:
        PROGRAMS[_alias] = PROGRAMS[_same]

# Cloud CLIs name an operation last: `aws ec2 terminate-instances`, `gcloud compute instances delete x`.
_CLOUD_READ = _Lazy(r"^(?:get|list|describe|show|head|wait|help|search|lookup|batch-get|scan|query|filter-log-"
                         r"events|tail|ls|info|version|whoami|account|get-caller-identity|print-access-token|"
                         r"print-identity-token|read|export|estimate|validate|check|test|preview|simulate|"
                         r"decode-authorization-message|generate-presigned-url|presign|logs|select|download|"
                         r"view|status|browse|ssh|scp|cat|config-list|inspect|find|diff|plan)(?:-|$)")
_CLOUD_ACT = _Lazy(r"^(?:delete|remove|rm|terminate|destroy|put|create|update|modify|attach|detach|"
                        r"associate|disassociate|reboot|restart|stop|start|run|invoke|deploy|set|add|"
                        r"replace|reset|revoke|authorize|rotate|disable|enable|cancel|purge|restore|import|"
                        r"upload|publish|register|deregister|tag|untag|resize|scale|promote|failover|apply|"
                        r"change|send|copy|cp|mv|sync|rb|mb|login|logout|activate|assign|unassign|grant|"
                        r"rollback|swap|move|release|allocate|suspend|resume|undelete|patch|upgrade|"
                        r"enroll|update-.*|reimage|redeploy|regenerate|renew|unlock|lock|empty|truncate|"
                        r"configure|init)(?:-|$)")
# Services whose every act is a credential change: reported as such.
_CREDENTIAL_SERVICES = frozenset({"iam", "sts", "secretsmanager", "kms", "ssm", "secrets", "keyvault", "ad",
                                  "role", "identity", "iam-service-accounts", "service-accounts", "keys",
                                  "auth", "access-keys"})


def _cloud(program: str, args: list[str]) -> Risk | None:
    spec = PROGRAMS[program]
    pos = positionals(args, spec.valued, 6)
    if not pos:
        return None
    if program == "aws" and pos[0] == "s3":
        return _aws_s3(args, pos)
    if program == "aws" and pos[:2] == ["configure", "set"]:
        return Risk(program, "configure set", "aws configure set changes stored credentials or settings", pos[2:4])
    for i, word in enumerate(pos):
        if i == 0 and program in ("aws", "az", "gcloud", "doctl"):
            continue   # the service or group, never the operation (`gcloud run`, `az deployment`)
        if _CLOUD_READ.match(word):
            return None
        if _CLOUD_ACT.match(word):
            verb = " ".join(pos[:i + 1])
            credential = any(p in _CREDENTIAL_SERVICES for p in pos[:i])
            why = (f"{program} {verb} changes a credential or its permissions" if credential
                   else f"{program} {verb} {spec.why}")
            where = [v for v in (_opt(args, "--profile", "--project", "--subscription", "-g", "--resource-group",
                                      "--region"),) if v]
            return Risk(program, verb, why, where + pos[i + 1:i + 3])
    return None


def _aws_s3(args: list[str], pos: list[str]) -> Risk | None:
    verb = pos[1] if len(pos) > 1 else ""
    if verb in ("rm", "rb", "mb", "mv", "sync", "website") or (
            verb == "cp" and len(pos) > 3 and pos[3].startswith("s3://")):
        return Risk("aws", f"s3 {verb}", f"aws s3 {verb} changes a bucket", pos[2:4])
    return None


# --- programs judged by their options --------------------------------------------------------------------------


def _rm(args: list[str]) -> Risk | None:
    targets = [a for a in args if not a.startswith("-") or a == "-"]
    recursive = _short(args, "rR", ("--recursive",))
    force = _short(args, "f", ("--force",))
    outside = [t for t in targets if t.startswith(("/", "~", "$")) and not t.startswith(("/tmp/", "/var/tmp/"))]
    globbed = [t for t in targets if any(c in t for c in "*?[")]
    if recursive or (force and (outside or globbed)) or (outside and any(system_path(t) for t in outside)):
        flags = "-rf" if recursive and force else "-r" if recursive else "-f" if force else ""
        return Risk("rm", flags, "deletes files" + (" recursively" if recursive else ""), targets[:3])
    return None


_SQL_ACT = _Lazy(r"(?:^|;|\n)\s*(?:drop|truncate|delete|update|insert|alter|create|grant|revoke|merge|"
                      r"replace|rename|comment\s+on|vacuum\s+full|reindex|cluster|reassign|lock|copy\s+\S+\s+from|"
                      r"load\s+data|flush|kill|shutdown|reset|set\s+global|call|do|refresh\s+materialized|"
                      r"attach|detach|import|restore)\b", re.I)
_MONGO_ACT = _Lazy(r"\.(?:drop|dropDatabase|deleteOne|deleteMany|remove|updateOne|updateMany|update|insert\w*|"
                        r"replaceOne|findOneAndDelete|findOneAndUpdate|findAndModify|createIndex|dropIndex\w*|"
                        r"renameCollection|createUser|dropUser|updateUser|grantRolesToUser|revokeRolesFromUser|"
                        r"shutdownServer)\s*\(")
_SQL_CLIENTS = {
    "psql": (("-c", "--command"), ("-f", "--file"), ("-h", "--host", "-d", "--dbname")),
    "mysql": (("-e", "--execute"), (), ("-h", "--host", "-D", "--database")),
    "mariadb": (("-e", "--execute"), (), ("-h", "--host", "-D", "--database")),
    "clickhouse-client": (("-q", "--query"), ("--queries-file",), ("-h", "--host", "-d", "--database")),
    "cqlsh": (("-e", "--execute"), ("-f", "--file"), ("-k", "--keyspace")),
    "sqlcmd": (("-Q", "-q"), ("-i",), ("-S", "-d")),
    "cockroach": (("-e", "--execute"), (), ("--host", "--database")),
}


def _sql(program: str, args: list[str], stdin: str) -> Risk | None:
    inline, files, where_opts = _SQL_CLIENTS.get(program, ((), (), ()))
    texts = [v for i, a in enumerate(args) for name in inline
             if (a == name and i + 1 < len(args) and (v := args[i + 1])) or
             (a.startswith(name + "=") and (v := a.split("=", 1)[1]))]
    if program == "sqlite3":
        pos = [a for a in args if not a.startswith("-")]
        texts = pos[1:2]
        where = pos[:1]
    else:
        where = [v for name in where_opts if (v := _opt(args, name))]
    texts.append(stdin)
    for text in texts:
        m = _SQL_ACT.search(text or "")
        if m:
            statement = m.group(0).strip(" ;\n").split()[0].upper()
            return Risk(program, statement, f"{program} runs {statement}: changes the database", where)
    if any(_opt(args, f) for f in files):
        return Risk(program, "-f", f"{program} runs a SQL file (its statements are not read here)", where)
    return None


def _mongo(program: str, args: list[str], stdin: str) -> Risk | None:
    script = " ".join(v for v in (_opt(args, "--eval"), stdin) if v)
    m = _MONGO_ACT.search(script)
    return Risk(program, m.group(0).strip(".( "), f"{program} runs {m.group(0).strip('.( ')}: changes the database",
                [a for a in args if not a.startswith("-")][:1]) if m else None


def _git(args: list[str]) -> Risk | None:
    spec = PROGRAMS["git"]
    pos = positionals(args, spec.valued, 4)
    if not pos:
        return None
    verb, rest = pos[0], args[args.index(pos[0]) + 1:] if pos[0] in args else []
    where = [v for v in (_opt(args, "-C"),) if v]
    if verb == "push":
        force = _short(rest, "fd", ("--force", "--force-with-lease", "--mirror", "--delete", "--prune",
                                    "--force-if-includes"))
        force = force or any(p.startswith((":", "+")) for p in positionals(rest, frozenset({"-o", "--push-option"})))
        return Risk("git", "push --force" if force else "push",
                    "git push --force rewrites a remote's history" if force else "git push publishes to a remote",
                    where + positionals(rest, frozenset({"-o", "--push-option"}), 3))
    if verb == "reset" and _short(rest, "", ("--hard", "--merge", "--keep")):
        return Risk("git", "reset --hard", "git reset --hard discards work", where + positionals(rest)[:1])
    if verb == "clean" and _short(rest, "fx"):
        return Risk("git", "clean -f", "git clean deletes untracked files", where)
    if verb == "checkout" and (("--" in rest and "." in rest) or _short(rest, "f", ("--force",))):
        return Risk("git", "checkout --", "git checkout -- discards changes", where)
    if verb == "restore" and not _short(rest, "S", ("--staged",)):
        return Risk("git", "restore", "git restore discards changes in the work tree", where)
    if verb == "branch" and _short(rest, "D", ("--delete",)) and (_short(rest, "Df", ("--force",)) or "-d" in rest):
        return Risk("git", "branch -D", "git branch -D deletes a branch", where + positionals(rest)[:1])
    if verb == "tag" and _short(rest, "d", ("--delete",)):
        return Risk("git", "tag -d", "git tag -d deletes a tag", where + positionals(rest)[:1])
    if verb == "stash" and pos[1:2] in (["drop"], ["clear"]):
        return Risk("git", f"stash {pos[1]}", "git stash drop loses stashed work", where)
    if verb in ("filter-branch", "filter-repo", "update-ref", "replace") or (verb == "reflog" and "expire" in rest):
        return Risk("git", verb, f"git {verb} rewrites history", where)
    if verb == "gc" and any(a.startswith("--prune") for a in rest):
        return Risk("git", "gc --prune", "git gc --prune drops unreachable commits", where)
    if verb == "remote" and pos[1:2] and pos[1] in ("remove", "rm", "set-url"):
        return Risk("git", f"remote {pos[1]}", "git remote changes where pushes go", where + pos[2:3])
    return None


def _ansible_playbook(args: list[str]) -> Risk | None:
    if _short(args, "C", ("--check", "--syntax-check", "--list-hosts", "--list-tasks", "--list-tags")):
        return None
    books = [a for a in positionals(args, frozenset({"-i", "--inventory", "-l", "--limit", "-e", "--extra-vars",
                                                     "-t", "--tags", "-u", "--user", "--skip-tags", "-f",
                                                     "--forks", "--vault-password-file", "-M"}), 2)]
    where = [v for v in (_opt(args, "-l", "--limit"), _opt(args, "-i", "--inventory")) if v]
    return Risk("ansible-playbook", "", "ansible-playbook changes the hosts it runs against", books + where)


_ANSIBLE_READ_MODULES = frozenset({"ping", "setup", "gather_facts", "stat", "slurp", "debug", "command_info",
                                   "service_facts", "package_facts", "find"})


def _ansible(args: list[str]) -> Risk | None:
    module = _opt(args, "-m", "--module-name") or "command"
    if module in _ANSIBLE_READ_MODULES or _short(args, "C", ("--check", "--list-hosts")):
        return None
    action = _opt(args, "-a", "--args") or ""
    hosts = positionals(args, frozenset({"-m", "--module-name", "-a", "--args", "-i", "--inventory", "-u", "-e",
                                         "-f", "--limit", "-l"}), 1)
    if module in ("command", "shell", "raw"):
        inner = classify(action)
        if inner is None:
            return None
        return Risk("ansible", f"-m {module}", f"ansible runs {inner.why} on hosts", [*hosts, inner.program])
    return Risk("ansible", f"-m {module}", f"ansible runs module {module} against hosts", [*hosts, action[:60]])


def _curl(args: list[str], piped_to_shell: bool) -> Risk | None:
    method = (_opt(args, "-X", "--request") or "").upper()
    data = _short(args, "dFT", ("--data", "--data-raw", "--data-binary", "--data-urlencode", "--form",
                                "--upload-file", "--json"))
    urls = [a for a in args if a.startswith(("http://", "https://")) or "://" in a][:1]
    if method in ("DELETE", "PUT", "PATCH", "POST") or (data and method != "GET"):
        return Risk("curl", method or "POST", f"curl {method or 'POST'} changes a remote resource", urls)
    out = _opt(args, "-o", "--output")
    if out and system_path(out):
        return Risk("curl", "-o", "curl writes a system file", [out])
    return None


def _dd(args: list[str]) -> Risk | None:
    target = next((a[3:] for a in args if a.startswith("of=")), None)
    return Risk("dd", "of=", "dd writes a device or file block by block", [target]) if target else None


def _chmodlike(program: str, args: list[str]) -> Risk | None:
    targets = [a for a in args if not a.startswith("-")][1:]
    if _short(args, "R", ("--recursive",)) or any(system_path(t) for t in targets):
        return Risk(program, "-R" if _short(args, "R", ("--recursive",)) else "",
                    f"{program} changes ownership or permissions" + (" recursively" if "-R" in args else ""),
                    targets[:2])
    return None


def _copy(program: str, args: list[str]) -> Risk | None:
    pos = [a for a in args if not a.startswith("-")]
    target = _opt(args, "-t", "--target-directory") or (pos[-1] if len(pos) >= 2 else None)
    if target and system_path(target):
        return Risk(program, "", f"{program} writes into a system path", [target])
    if program == "mv" and any(system_path(p) for p in pos[:-1]):
        return Risk(program, "", "mv moves a system file away", pos[:2])
    return None


def _sed(args: list[str]) -> Risk | None:
    if not _short(args, "i", ("--in-place",)):
        return None
    files = [a for a in args if not a.startswith("-")][1:]
    return Risk("sed", "-i", "sed -i rewrites a system file", files[:2]) if any(map(system_path, files)) else None


def _tee(args: list[str]) -> Risk | None:
    files = [a for a in args if not a.startswith("-")]
    return Risk("tee", "", "tee writes a system file", files[:2]) if any(map(system_path, files)) else None


def _rsync(args: list[str]) -> Risk | None:
    pos = [a for a in args if not a.startswith("-")]
    if any(a.startswith("--delete") or a == "--remove-source-files" for a in args):
        return Risk("rsync", "--delete", "rsync --delete removes files at the destination", pos[-1:])
    if pos and system_path(pos[-1].split(":", 1)[-1]):
        return Risk("rsync", "", "rsync writes into a system path", pos[-1:])
    return None


def _find(args: list[str], depth: int) -> Risk | None:
    if "-delete" in args:
        return Risk("find", "-delete", "find -delete deletes every match", args[:1])
    for flag in ("-exec", "-execdir", "-ok", "-okdir"):
        if flag in args:
            i = args.index(flag)
            end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+", "\\;")), len(args))
            inner = _judge(args[i + 1:end], depth + 1)
            if inner is None and args[i + 1:i + 2] and _base(args[i + 1]) in ("rm", "shred", "unlink"):
                inner = Risk(_base(args[i + 1]), "", "deletes files", [])
            if inner:
                return Risk(inner.program, inner.verb, f"find {flag} runs it on every match: {inner.why}",
                            args[:1] + inner.context)
    return None


def _kill(program: str, args: list[str]) -> Risk | None:
    if program == "kill" and any(a in ("-l", "-L", "--list") for a in args):
        return None
    targets = [a for a in args if not a.startswith("-")]
    return Risk(program, "", f"{program} stops processes", targets[:2]) if targets else None


def _crontab(args: list[str]) -> Risk | None:
    if _short(args, "l") and not _short(args, "re"):
        return None
    return Risk("crontab", "-r" if "-r" in args else "-e" if "-e" in args else "",
                "crontab replaces or removes scheduled jobs", [])


def _iptables(program: str, args: list[str]) -> Risk | None:
    acts = ("-A", "-D", "-I", "-R", "-F", "-X", "-P", "-N", "-E", "-Z", "--append", "--delete", "--insert",
            "--flush", "--policy", "--delete-chain", "--new-chain")
    act = next((a for a in args if a in acts), None)
    if program.endswith("-restore"):
        act = act or "restore"
    return Risk(program, act, f"{program} changes the firewall", args[:4]) if act else None


def _ssh_keygen(args: list[str]) -> Risk | None:
    if _short(args, "lFBDyQ") and not _short(args, "R"):
        return None
    if "-R" in args:
        return Risk("ssh-keygen", "-R", "ssh-keygen -R removes a host key from known_hosts", [_opt(args, "-R") or ""])
    return Risk("ssh-keygen", "", "ssh-keygen makes or changes a key", [_opt(args, "-f") or ""])


def _sysctl(args: list[str]) -> Risk | None:
    if _short(args, "wp", ("--write", "--load", "--system")) or any("=" in a and not a.startswith("-") for a in args):
        return Risk("sysctl", "-w", "sysctl changes a kernel setting", [a for a in args if "=" in a][:2])
    return None


_NAMED = _Lazy(r"(?:^|[-_./:])(deploy|deployment|rollout|release|publish|destroy|teardown|decommission|"
                    r"drop|wipe|purge|rollback|migrate|migration|failover|reboot|restart|nuke|reset-db|"
                    r"provision|cutover|promote)(?:$|[-_.:])", re.I)
_TASK_RUNNERS = frozenset({"make", "just", "task", "mage", "rake", "invoke", "nox", "tox"})
_ALWAYS = {   # acts whatever their arguments say
    "mkfs": "makes a filesystem (erases the device)", "mkswap": "formats a swap device", "wipefs": "erases "
    "filesystem signatures", "shred": "overwrites files", "fdisk": "changes a partition table", "parted":
    "changes a partition table", "sgdisk": "changes a partition table", "gdisk": "changes a partition table",
    "sfdisk": "changes a partition table", "reboot": "reboots the machine", "shutdown": "shuts the machine down",
    "halt": "halts the machine", "poweroff": "powers the machine off", "passwd": "changes a password",
    "chpasswd": "changes passwords", "usermod": "changes a user account", "useradd": "adds a user account",
    "userdel": "deletes a user account", "groupadd": "adds a group", "groupdel": "deletes a group",
    "groupmod": "changes a group", "gpasswd": "changes a group's members", "chage": "changes password ageing",
    "visudo": "changes sudo rules", "vipw": "changes the password file", "htpasswd": "changes a password file",
    "ssh-copy-id": "installs a key on a host", "truncate": "cuts files", "mount": "mounts a filesystem",
    "umount": "unmounts a filesystem", "swapoff": "turns swap off", "swapon": "turns swap on", "insmod":
    "loads a kernel module", "rmmod": "unloads a kernel module", "lvremove": "deletes a logical volume",
    "vgremove": "deletes a volume group", "pvremove": "deletes a physical volume", "lvresize": "resizes a volume",
    "lvextend": "resizes a volume", "lvreduce": "shrinks a volume", "cryptsetup": "changes an encrypted volume",
    "mdadm": "changes a RAID array", "dropdb": "drops a database", "dropuser": "drops a database role",
    "createuser": "creates a database role", "pg_restore": "restores into a database", "pg_resetwal":
    "resets a database's WAL", "pg_ctl": "starts, stops or promotes a database", "pg_ctlcluster":
    "starts or stops a database", "pg_upgrade": "upgrades a database cluster", "pg_dropcluster":
    "drops a database cluster", "mongorestore": "restores into a database", "update-alternatives":
    "changes system defaults", "update-grub": "rewrites the boot loader", "grub-install": "installs the boot "
    "loader", "init": "changes the runlevel", "telinit": "changes the runlevel", "chattr": "changes file "
    "attributes", "setfacl": "changes file permissions", "modprobe": "loads or unloads a kernel module",
    "dropdb.exe": "drops a database", "kexec": "boots another kernel", "chpasswd.exe": "changes passwords",
}
_MKFS = _Lazy(r"^mkfs(?:\.\w+)?$")
_READ_ONLY_FLAGS = {"fdisk": ("-l", "--list"), "parted": ("-l", "--list", "print"), "sfdisk": ("-l", "--list", "-d"),
                    "mount": (), "cryptsetup": ("status", "luksDump", "isLuks"), "mdadm": ("--detail", "-D",
                    "--examine", "-E", "--query", "-Q"), "modprobe": ("-n", "--dry-run", "-c", "--showconfig"),
                    "pg_ctl": ("status",), "passwd": ("-S", "--status"), "chage": ("-l", "--list"),
                    "pg_upgrade": ("--check", "-c"), "init": (), "update-alternatives": ("--display", "--list",
                    "--query", "--get-selections")}
# Commands that only look whatever their options: no table needed, and no generic rule applies to them.
_LOOK = frozenset("ls cat less more head tail grep egrep fgrep rg ag wc sort uniq cut tr awk jq yq diff cmp file stat "
                  "du df free top htop ps pgrep pstree id whoami hostname uname date uptime which whereis type env "
                  "printenv echo printf pwd cd tree realpath readlink basename dirname true false test sleep "
                  "nslookup dig host ping traceroute tracepath mtr nc ss netstat ip ifconfig lsof lsblk blkid "
                  "journalctl dmesg vmstat iostat sar watch man help history alias md5sum sha256sum sha1sum "
                  "base64 xxd od hexdump strings column less zcat zgrep bzcat xzcat tar gzip gunzip unzip zip "
                  "python python3 node go pytest ruff mypy black npm pnpm yarn pip pip3 uv poetry cargo rustc gcc "
                  "make cmake ninja mvn gradle java openssl curl wget http nmap getent timedatectl hostnamectl "
                  "localectl loginctl resolvectl nmcli ssh scp sftp code vim vi nano emacs git kubectl "
                  "docker".split())


def _named(program: str, args: list[str]) -> Risk | None:
    """A script or a task-runner target named for a deploy, a teardown or a migration."""
    if program in _TASK_RUNNERS or (program in ("npm", "yarn", "pnpm", "bun") and args[:1] == ["run"]):
        targets = [a for a in args if not a.startswith("-") and "=" not in a and a != "run"]
        hit = next((t for t in targets if _NAMED.search(t)), None)
        return Risk(program, hit, f"{program} {hit} is named for a deploy, teardown or migration",
                    targets[:3]) if hit else None
    if program in _LOOK or program in PROGRAMS:
        return None
    m = _NAMED.search(program)
    if m:
        return Risk(program, "", f"{program} is named for a {m.group(1).lower()}", args[:3])
    return None


# --- one simple command -------------------------------------------------------------------------------------------

_WRAPPERS = {   # program -> its options that take a value (everything after them is the command it runs)
    "sudo": frozenset({"-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U", "-D", "--user", "--group", "--chdir"}),
    "doas": frozenset({"-u", "-C"}), "nohup": frozenset(), "time": frozenset({"-f", "-o"}), "command": frozenset(),
    "builtin": frozenset(), "exec": frozenset({"-a"}), "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p"}), "stdbuf": frozenset({"-i", "-o", "-e"}), "unbuffer": frozenset(),
    "chrt": frozenset(), "taskset": frozenset(), "caffeinate": frozenset(), "env": frozenset({"-u", "-C", "-S"}),
    "runuser": frozenset({"-u", "-g"}), "setsid": frozenset(), "torsocks": frozenset(), "proxychains": frozenset(),
    "xargs": frozenset({"-I", "-n", "-P", "-d", "-L", "-s", "-E", "-a", "--max-args", "--max-procs"}),
    "watch": frozenset({"-n", "--interval", "-d"}), "retry": frozenset({"-t", "--times", "-d", "--delay"}),
}
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish", "su", "eval"})
_SSH_VALUED = frozenset("-p -i -l -o -J -F -L -R -D -b -c -E -e -I -m -O -Q -S -W -w -B".split())


def _unwrap(words: list[str]) -> tuple[list[str], bool]:
    """The command a chain of wrappers runs (`sudo -u x env A=1 timeout 5 CMD` -> CMD) and whether sudo."""
    sudo = False
    while words:
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words = words[1:]
        if not words:
            break
        name = _base(words[0])
        if name not in _WRAPPERS and name != "timeout" and name != "flock" and name != "chroot":
            break
        sudo = sudo or name in ("sudo", "doas", "runuser")
        valued = _WRAPPERS.get(name, frozenset({"-s", "--signal", "-k", "--kill-after", "-w", "-E"}))
        i = 1
        while i < len(words) and (words[i].startswith("-") or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[i])):
            i += 2 if words[i] in valued else 1
        if name in ("timeout", "flock", "chroot") and i < len(words):
            i += 1   # the duration, the lock file, the new root
        if name in ("sudo", "doas") and i >= len(words):
            return [], sudo   # `sudo -i`, `sudo -s`: an interactive root shell
        words = words[i:]
    return words, sudo


def _judge(words: list[str], depth: int, stdin: str = "", piped: bool = False) -> Risk | None:
    words, sudo = _unwrap(words)
    if not words or depth > 4:
        return None
    program, args = _base(words[0]), words[1:]
    risk = _program(program, args, depth, stdin, piped)
    if risk is not None and sudo:
        risk.why = f"as root: {risk.why}"
    return risk


def _program(program: str, args: list[str], depth: int, stdin: str, piped: bool) -> Risk | None:
    if program in _SHELLS:
        script = _opt(args, "-c") if program != "eval" else " ".join(args)
        if script:
            return classify(script, depth + 1)
        if piped and program not in ("su", "eval") and not [a for a in args if not a.startswith("-")]:
            return Risk(program, "", f"{program} runs a script read from a pipe (unseen here)", [])
        if stdin:
            return classify(stdin, depth + 1)
        scripts = [a for a in args if not a.startswith("-")]
        return _named(_base(scripts[0]), scripts[1:]) if scripts else None
    if program == "ssh":
        pos = positionals(args, _SSH_VALUED, 64)
        if len(pos) >= 2:
            inner = classify(" ".join(pos[1:]), depth + 1)
            if inner:
                inner.context = [pos[0].split("@")[-1], *inner.context]
                inner.why = f"on {pos[0].split('@')[-1]}: {inner.why}"
            return inner
        return None
    if program in ("kubectl", "k", "oc") and "exec" in args and "--" in args:
        inner = _judge(args[args.index("--") + 1:], depth + 1)
        if inner:
            inner.context = [*positionals(args[:args.index("--")], frozenset(_KUBE_VALUED.split()), 2)[1:],
                             *inner.context]
        return inner
    if program in ("docker", "podman") and args[:1] == ["exec"]:
        pos = positionals(args[1:], frozenset({"-e", "--env", "-u", "--user", "-w", "--workdir"}), 64)
        return _judge(pos[1:], depth + 1) if len(pos) >= 2 else None
    if program == "service" and len(args) >= 2 and args[1] in PROGRAMS["service"].risky:
        return Risk("service", args[1], f"service {args[1]} changes a service", args[:1])
    if program == "nginx" and "-s" in args:
        return Risk("nginx", "-s " + (_opt(args, "-s") or ""), "nginx -s signals the web server", [])
    if program == "docker-compose" or (program in ("docker", "podman") and "compose" in args[:3]):
        rest = args[args.index("compose") + 1:] if "compose" in args[:3] else args
        # Compose's -f/-p take a file and a project (docker's own -f is --force): dropped before the verb.
        kept = [a for i, a in enumerate(rest) if a not in ("-f", "--file", "-p", "--project-name")
                and (i == 0 or rest[i - 1] not in ("-f", "--file", "-p", "--project-name"))]
        return PROGRAMS["docker"].judge("docker", ["compose", *kept])
    if _MKFS.match(program):
        return Risk(program, "", f"{program} makes a filesystem (erases the device)", args[-1:])
    if program in _ALWAYS:
        if any(a in _READ_ONLY_FLAGS.get(program, ()) for a in args) or (program == "mount" and not args):
            return None
        if program in ("passwd",) and not args:
            return Risk(program, "", "passwd changes your password", [])
        return Risk(program, "", f"{program} {_ALWAYS[program]}", [a for a in args if not a.startswith("-")][:2])
    special = {
        "rm": lambda: _rm(args), "git": lambda: _git(args), "ansible-playbook": lambda: _ansible_playbook(args),
        "ansible": lambda: _ansible(args), "curl": lambda: _curl(args, piped), "dd": lambda: _dd(args),
        "chmod": lambda: _chmodlike(program, args), "chown": lambda: _chmodlike(program, args),
        "chgrp": lambda: _chmodlike(program, args), "cp": lambda: _copy(program, args),
        "mv": lambda: _copy(program, args), "install": lambda: _copy(program, args),
        "ln": lambda: _copy(program, args), "sed": lambda: _sed(args), "tee": lambda: _tee(args),
        "rsync": lambda: _rsync(args), "find": lambda: _find(args, depth), "kill": lambda: _kill(program, args),
        "pkill": lambda: _kill(program, args), "killall": lambda: _kill(program, args),
        "crontab": lambda: _crontab(args), "ssh-keygen": lambda: _ssh_keygen(args), "sysctl": lambda: _sysctl(args),
        "wget": lambda: _copy("wget", ["-", o]) if (o := _opt(args, "-O", "--output-document")) else None,
    }
    if program in special:
        return special[program]()
    if program in ("iptables", "ip6tables", "iptables-restore", "ip6tables-restore", "ebtables", "arptables"):
        return _iptables(program, args)
    if program in _SQL_CLIENTS or program == "sqlite3":
        return _sql(program, args, stdin)
    if program in ("mongosh", "mongo"):
        return _mongo(program, args, stdin)
    if program in ("aws", "az", "gcloud", "doctl", "openstack"):
        return _cloud(program, args)
    if program in PROGRAMS and program not in ("ansible-playbook", "crontab"):
        return PROGRAMS[program].judge(program, args) or _named(program, args)
    return _named(program, args)


def _redirected(cmd: _Cmd) -> Risk | None:
    for op, target in cmd.redirs:
        if op in (">", ">>", ">|", "&>", "&>>", "<>") and system_path(target):
            program = _base(_unwrap(cmd.words)[0][0]) if _unwrap(cmd.words)[0] else "shell"
            return Risk(program, op, f"a redirection ({op}) overwrites a system file", [target])
    return None


def classify(command: str, depth: int = 0) -> Risk | None:
    """The first risky act in a command line (a chain, a pipeline, a substitution), or None. Never raises:
    a line it cannot read is None, since nothing is blocked on this answer."""
    try:
        for cmd in commands(command, depth):
            risk = _redirected(cmd) or _judge(cmd.words, depth, cmd.stdin, cmd.piped)
            if risk is not None:
                return risk
    except Exception:
        return None
    return None
