"""Allow-lists for network probes and small local reads: curl, git, DNS, nc, ping, openssl, psql, sudo...

Each option is listed with its arity and a check of its value, so a flag that writes a local
file (`curl -o FILE`, `-D`, `-c`, `-w '%output{FILE}'`), reads one and sends it (`-H @FILE`,
`-b FILE`, `-K FILE`), or runs a program (`git --upload-pack`, `ext::` URLs) is simply absent.
"""

from __future__ import annotations

import re
import urllib.parse

from muninn.guards.command.argspec import (
    HOST,
    INT,
    NAME,
    NUMBER,
    PATH,
    SWITCH,
    Parsed,
    Refused,
    Tool,
    Verb,
    exactly,
    matches,
    names,
    one_of,
    value,
)
from muninn.guards.command.shell_words import Word

# --- curl ---------------------------------------------------------------------------------------------
_WRITE_OUT_VARS = ("http_code|response_code|time_total|time_connect|time_namelookup|time_starttransfer|"
                   "size_download|ssl_verify_result|url_effective|remote_ip|http_version|content_type|num_redirects")
# Literal text and %{variable}: no %output{FILE} (writes), no %header{}, no @FILE (reads the format from a file).
_WRITE_OUT = matches(rf"(?:[A-Za-z0-9 :,=_./-]|\\n|%\{{(?:{_WRITE_OUT_VARS})\}})*", "a plain -w format")
_HEADER_FORM = matches(r"[A-Za-z0-9-]{1,64}:[ -~]{0,4096}", "a 'Name: value' header (not @FILE)")
# A server that honours a method override (X-HTTP-Method-Override, X-HTTP-Method, X-Method-Override,
# a `_method=` parameter) runs a DELETE sent as a GET: any header or parameter whose name speaks of a
# method may only say GET or HEAD, the methods -X allows.
_READ_METHODS = frozenset({"GET", "HEAD"})


def _overrides_method(name: str, value: str) -> bool:
    return "method" in re.sub(r"[^a-z]", "", name.lower()) and value.strip().upper() not in _READ_METHODS


def _HEADER(text: str) -> str | None:
    if problem := _HEADER_FORM(text):
        return problem
    name, _, given = text.partition(":")
    if _overrides_method(name, given):
        return f"{text!r} overrides the request's method: only GET or HEAD may be sent"
    return None


def _method_parameter(url: str) -> str | None:
    """A query parameter naming a method (`?_method=DELETE`, percent-encoded or not)."""
    query = url.partition("?")[2]
    for pair in re.split(r"[&;]", query):
        name, _, given = urllib.parse.unquote_plus(pair).partition("=")
        if _overrides_method(name, given):
            return f"{url!r}: the parameter {name!r} overrides the request's method: only GET or HEAD"
    return None
_USER = matches(r"[^@\s][ -~]{0,511}", "user:password (not @FILE)")
# curl guesses ftp/dict/ldap... from a host name without a scheme: those are refused.
# The guess reads the host, so the check comes after any `user@` (`u@ftp.example.com` is FTP).
# With an explicit http(s):// nothing is guessed.
_URL = re.compile(r"(?:https?://(?:[A-Za-z0-9._-]+@)?|(?:[A-Za-z0-9._-]+@)?"
                  r"(?!(?:ftp|dict|ldap|imap|pop3|smtp|gopher|telnet|tftp|rtsp|mqtt|smb)\.))[A-Za-z0-9][A-Za-z0-9.-]*(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~:/?&=%+,@-]*)?",
                  re.IGNORECASE)


def _urls(given: list[Word]) -> str | None:
    if not given:
        return "no URL"
    for word in given:
        if not _URL.fullmatch(word.text):
            return f"{word.text!r} is not a plain http(s) URL (no other scheme, globs or braces)"
        if problem := _method_parameter(word.text):
            return problem
    return None


_SECONDS = value(NUMBER)
CURL = Tool("curl", "curl", {
    **{f: SWITCH for f in ("-s", "--silent", "-S", "--show-error", "-f", "--fail", "--fail-with-body", "-I",
                           "--head", "-k", "--insecure", "-L", "--location", "-i", "--include", "-4", "-6",
                           "--ipv4", "--ipv6", "--compressed", "-g", "--globoff", "--http1.1", "--http2",
                           "--no-progress-meter")},
    "-H": value(_HEADER, text=True), "--header": value(_HEADER, text=True),
    "-u": value(_USER, text=True), "--user": value(_USER, text=True),
    "--oauth2-bearer": value(matches(r"[!-~]{1,4096}", "a token"), text=True),
    "-X": value(one_of("GET", "HEAD")), "--request": value(one_of("GET", "HEAD")),
    "-m": _SECONDS, "--max-time": _SECONDS, "--connect-timeout": _SECONDS,
    "--retry": value(INT), "--retry-delay": value(INT),
    "-A": value(matches(r"[A-Za-z0-9][ -~]{0,200}", "a user agent")),
    "--user-agent": value(matches(r"[A-Za-z0-9][ -~]{0,200}", "a user agent")),
    "-o": value(one_of("/dev/null")), "--output": value(one_of("/dev/null")),
    "-w": value(_WRITE_OUT), "--write-out": value(_WRITE_OUT),
    "--cacert": value(PATH), "--cert": value(PATH), "--key": value(PATH),
    "--resolve": value(matches(r"[A-Za-z0-9.-]+:[0-9]{1,5}:[0-9A-Fa-f.:\[\]]+", "HOST:PORT:ADDRESS")),
}, {(): Verb({}, _urls)})

# --- git ----------------------------------------------------------------------------------------------
# Remote URLs only: no ext::/fd:: transports, no local paths or file://, no host starting with '-'.
_GIT_URL = matches(r"(?:https?|ssh|git)://(?:[A-Za-z0-9._-]+@)?[A-Za-z0-9][A-Za-z0-9.-]*(?::[0-9]{1,5})?"
                   r"(?:/[A-Za-z0-9._~/+-]*)?|(?:[A-Za-z0-9._-]+@)?[A-Za-z0-9][A-Za-z0-9.-]*:[A-Za-z0-9._~][A-Za-z0-9._~/+-]*",
                   "a remote https/ssh/git URL")


def _git_args(given: list[Word]) -> str | None:
    if not given:
        return "name the remote URL"
    problem = _GIT_URL(given[0].text)
    if problem:
        return problem
    for word in given[1:]:
        if not re.fullmatch(r"[A-Za-z0-9._/-]{1,200}", word.text):
            return f"pattern {word.text!r} is not a plain ref name"
    return None


GIT = Tool("git", "gnu", {}, {("ls-remote",): Verb(
    {f: SWITCH for f in ("--heads", "--tags", "-h", "-t", "--refs", "-q", "--quiet", "--exit-code")}
    | {"--symref": SWITCH}, _git_args)})

# --- DNS ----------------------------------------------------------------------------------------------
_TYPES = ("A", "AAAA", "CNAME", "MX", "NS", "TXT", "SOA", "SRV", "PTR", "CAA", "a", "aaaa", "cname", "mx", "ns",
          "txt", "soa", "srv", "ptr", "caa")
_DIG_PLUS = re.compile(r"\+(?:short|noall|answer|authority|additional|tcp|nocmd|nostats|nocomments|search|"
                       r"dnssec|trace|time=[0-9]{1,3}|tries=[0-9]{1,2}|retry=[0-9]{1,2})")


def dig(words: list[Word]) -> None:
    """dig's own syntax: @server, +options, -t TYPE, -x ADDRESS, then names and types."""
    i = 0
    while i < len(words):
        text = words[i].text
        if words[i].tainted:
            raise Refused(f"{text!r}: no $VARIABLE in a DNS query")
        if text.startswith("@"):
            if HOST(text[1:]):
                raise Refused(f"dig {text!r}: not @SERVER")
        elif text.startswith("+"):
            if not _DIG_PLUS.fullmatch(text):
                raise Refused(f"dig option {text!r} is not on the allow-list")
        elif text in ("-4", "-6"):
            pass
        elif text in ("-t", "-x"):
            i += 1
            arg = words[i].text if i < len(words) else ""
            if (text == "-t" and arg not in _TYPES) or (text == "-x" and HOST(arg)):
                raise Refused(f"dig {text} {arg!r}: not a record type / address")
        elif text.startswith("-"):
            raise Refused(f"dig option {text!r} is not on the allow-list (-f reads a batch file, -k a key)")
        elif text not in _TYPES and HOST(text):
            raise Refused(f"dig {text!r}: not a name or record type")
        i += 1
    if not any(not w.text.startswith(("@", "+", "-")) for w in words):
        raise Refused("dig: no name to look up")


def nslookup(words: list[Word]) -> None:
    rest = [w for w in words if not re.fullmatch(r"-(?:type=[A-Za-z]{1,5}|timeout=[0-9]{1,3}|port=[0-9]{1,5})",
                                                 w.text)]
    if not 1 <= len(rest) <= 2 or any(w.tainted or HOST(w.text) for w in rest):
        raise Refused("only `nslookup [-type=T] [-timeout=N] NAME [SERVER]`")


HOST_TOOL = Tool("host", "gnu", {"-t": value(one_of(*_TYPES)), "-W": value(INT), "-4": SWITCH, "-6": SWITCH},
                 {(): Verb({}, names("name", "server", check=HOST))},
                 require=lambda p: None if p.args else "no name to look up")

# --- small network probes ------------------------------------------------------------------------------
_PORT = matches(r"[0-9]{1,5}", "a port number")
NC = Tool("nc", "gnu", {"-z": SWITCH, "-v": SWITCH, "-n": SWITCH, "-4": SWITCH, "-6": SWITCH, "-w": value(INT)},
          {(): Verb({}, exactly(("host", HOST), ("port", _PORT)))},
          require=lambda p: None if "-z" in p.options else "only `nc -z` (a port scan that sends nothing)")
PING = Tool("ping", "gnu", {"-c": value(INT), "-W": value(NUMBER), "-w": value(INT), "-q": SWITCH, "-n": SWITCH,
                            "-4": SWITCH, "-6": SWITCH},
            {(): Verb({}, exactly(("host", HOST)))},
            require=lambda p: None if "-c" in p.options else "ping needs -c N (without it, it never ends)")
GETENT = Tool("getent", "gnu", {}, {("hosts",): Verb({}, exactly(("name", HOST))),
                                    ("ahosts",): Verb({}, exactly(("name", HOST)))})


def _s_client(p: Parsed) -> str | None:
    return "s_client needs -connect HOST:PORT" if p.verb == ("s_client",) and "-connect" not in p.options else None


OPENSSL = Tool("openssl", "single", {}, {
    ("s_client",): Verb({"-connect": value(matches(r"[A-Za-z0-9.-]+:[0-9]{1,5}", "HOST:PORT")),
                         "-servername": value(HOST), "-brief": SWITCH, "-showcerts": SWITCH,
                         "-verify_return_error": SWITCH, "-CAfile": value(PATH)}),
    ("x509",): Verb({f: SWITCH for f in ("-noout", "-enddate", "-startdate", "-dates", "-subject", "-issuer",
                                         "-fingerprint")} | {"-checkend": value(INT), "-in": value(PATH)}),
    ("version",): Verb(),
}, require=_s_client)

# --- databases ----------------------------------------------------------------------------------------
_SELECT_1 = one_of("select 1", "SELECT 1", "select 1;", "SELECT 1;")
_PG = {"-h": value(HOST), "--host": value(HOST), "-p": value(_PORT), "--port": value(_PORT),
       "-U": value(NAME), "--username": value(NAME), "-d": value(NAME), "--dbname": value(NAME)}
PSQL = Tool("psql", "gnu", {**_PG, "-X": SWITCH, "--no-psqlrc": SWITCH, "-A": SWITCH, "-t": SWITCH, "-q": SWITCH,
                            "-w": SWITCH, "--no-password": SWITCH, "-c": value(_SELECT_1),
                            "--command": value(_SELECT_1)},
            {(): Verb({}, names("dbname", "user"))},
            require=lambda p: None if {"-c", "--command"} & set(p.options) else "psql needs -c 'select 1'")
MYSQLADMIN = Tool("mysqladmin", "gnu", {"-h": value(HOST), "--host": value(HOST), "-P": value(_PORT),
                                        "--port": value(_PORT), "-u": value(NAME), "--user": value(NAME),
                                        "--connect-timeout": value(INT), "-s": SWITCH, "--silent": SWITCH},
                  {("ping",): Verb()})
PG_ISREADY = Tool("pg_isready", "gnu", {**_PG, "-t": value(INT), "--timeout": value(INT), "-q": SWITCH,
                                        "--quiet": SWITCH}, {(): Verb()})
REDIS_CLI = Tool("redis-cli", "gnu", {"-h": value(HOST), "-p": value(_PORT), "--tls": SWITCH},
                 {("ping",): Verb()})

# --- local identity and host facts ------------------------------------------------------------------
def _switches(name: str, *flags: str, verbs: dict | None = None) -> Tool:
    return Tool(name, "gnu", {f: SWITCH for f in flags}, verbs or {(): Verb()})


SUDO = Tool("sudo", "gnu", {"-k": SWITCH, "-K": SWITCH, "-S": SWITCH, "-n": SWITCH, "-l": SWITCH,
                            "-p": value(matches(r"[ -~]{0,100}", "a prompt"))},
            {(): Verb({}, lambda given: None if [w.text for w in given] in ([], ["true"])
                      else "sudo may only run `true` (e.g. `sudo -k true`)")},
            require=lambda p: None if p.args or {"-l", "-K"} & set(p.options)
            else "sudo without a command would open a shell")
LOCAL = [
    _switches("true"), _switches("hostname", "-f", "-s", "-i"), _switches("whoami"), _switches("uptime", "-p"),
    _switches("id", "-u", "-n", "-g", "-G"), _switches("uname", "-a", "-r", "-n", "-s", "-m", "-v"),
    Tool("df", "gnu", {"-h": SWITCH, "-P": SWITCH, "-T": SWITCH}, {(): Verb({}, names(*["path"] * 4, check=PATH))}),
    Tool("zpool", "gnu", {}, {("status",): Verb({"-x": SWITCH, "-v": SWITCH}, names(*["pool"] * 4)),
                              ("list",): Verb({"-H": SWITCH}, names(*["pool"] * 4))}),
    Tool("cat", "gnu", {}, {("/etc/os-release",): Verb()}),
    Tool("systemctl", "gnu", {"--quiet": SWITCH, "-q": SWITCH},
         {(v,): Verb({}, exactly(("unit", matches(r"[A-Za-z0-9@._-]{1,200}", "a unit name"))))
          for v in ("is-active", "is-enabled", "is-failed")}),
    _switches("free", "-m", "-g", "-h", "-b", "-k"), _switches("nproc"), _switches("lsb_release", "-a", "-d", "-s"),
    _switches("date", "-u", "-I", "-R"),   # no -s / --set, no +FORMAT: only the clock
    _switches("pveversion", "-v"),
    Tool("zfs", "gnu", {}, {("list",): Verb({"-H": SWITCH}, names(*["dataset"] * 4))}),
    # `ssh HOST exit` / `echo ok`: the login is the proof. echo takes plain words only (no -e, no $).
    Tool("exit", "gnu", {}, {(): Verb({}, names("code", check=one_of("0")))}),
    Tool("echo", "gnu", {}, {(): Verb({}, names(*["word"] * 8, check=matches(r"[A-Za-z0-9][A-Za-z0-9 .:_,-]{0,100}",
                                                                           "a plain word")))}),
]
TOOLS: dict[str, Tool] = {t.name: t for t in (CURL, GIT, HOST_TOOL, NC, PING, GETENT, OPENSSL, PSQL, MYSQLADMIN,
                                               PG_ISREADY,
                                               REDIS_CLI, SUDO, *LOCAL)}
CUSTOM = {"dig": dig, "nslookup": nslookup}
