"""Two classes of the verify guard, generated (evals/lab/guard_cases_output.py): an output-shaping option
(gcloud --format/--filter, kubectl -o jsonpath/custom-columns, aws and az --query) whose expression
names a secret-ish field, and a method override (header or `_method=` parameter) that turns a GET
into a write. Every case of each class is refused for that reason; the ordinary cases of the same
shapes stay allowed."""

from __future__ import annotations

import pytest

from muninn.evals.lab.guard_cases import INJECTED
from muninn.evals.lab.guard_cases_output import (
    OVERRIDE_HEADERS,
    SECRET_FIELDS,
    method_override,
    method_plain,
    output_shaping_plain,
    output_shaping_secret,
    spellings,
)
from muninn.guards.command import guard as command_guard
from muninn.guards.command.secret_fields import secret_field

_OWN_TOOLS = ("gcloud", "kubectl", "aws", "az", "curl")


def _wrongly(cases: list[str], allowed: bool) -> list[tuple[str, str]]:
    return [(c, v.reason) for c in cases if (v := command_guard.check(c, INJECTED)).allowed != allowed]


def test_the_classes_are_large() -> None:
    assert len(output_shaping_secret()) >= 10_000 and len(output_shaping_plain()) >= 6_000
    assert len(method_override()) >= 2_500 and len(method_plain()) >= 50


def test_every_output_shaping_option_naming_a_secret_is_refused_for_it() -> None:
    cases = output_shaping_secret()
    assert _wrongly(cases, allowed=False) == []
    # Refused by this rule, not by an accident of the value's form.
    other = [(c, r) for c in cases if "secret-ish field" not in (r := command_guard.check(c, INJECTED).reason)]
    assert other == []


def test_ordinary_output_shaping_stays_allowed() -> None:
    assert _wrongly(output_shaping_plain(), allowed=True) == []


def test_every_method_override_is_refused_for_it() -> None:
    cases = method_override()
    assert _wrongly(cases, allowed=False) == []
    ours = [c for c in cases if c.split()[0] in _OWN_TOOLS]
    other = [(c, r) for c in ours
             if "overrides the request's method" not in (r := command_guard.check(c, INJECTED).reason)]
    assert other == []
    assert all("not on the allow-list" in command_guard.check(c, INJECTED).reason
               for c in cases if c.split()[0] not in _OWN_TOOLS)


def test_ordinary_headers_and_parameters_stay_allowed() -> None:
    assert _wrongly(method_plain(), allowed=True) == []


@pytest.mark.parametrize(("command", "allowed"), [
    ("gcloud config list --format 'value(proxy.password)'", False),    # the issue's case
    ("gcloud config get-value proxy/password", False),                  # the guard's own rule
    ("gcloud config list", True),
    ("gcloud config list --format json", True),
    ("gcloud auth list --filter=status:ACTIVE --format='value(account)'", True),
    ("curl -H 'X-HTTP-Method-Override: DELETE' https://api.example.com/items/7", False),   # the issue's case
    ("curl -sf https://api.example.com/items/7", True),
    ("aws ec2 describe-instances --query 'Reservations[].Instances[].[InstanceId,KeyName,PrivateIpAddress]'", True),
    ("kubectl get nodes -o 'jsonpath={.items[*].status.nodeInfo.kubeletVersion}'", True),
])
def test_the_issues_cases(command: str, allowed: bool) -> None:
    assert command_guard.check(command, INJECTED).allowed is allowed, command_guard.check(command, INJECTED).reason


@pytest.mark.parametrize("words", SECRET_FIELDS, ids=["_".join(w) for w in SECRET_FIELDS])
def test_each_secret_field_in_each_spelling(words: tuple[str, ...]) -> None:
    for spelled in spellings(words):
        assert secret_field(f"value(x.{spelled})"), spelled


@pytest.mark.parametrize("header", OVERRIDE_HEADERS)
def test_a_header_variable_cannot_hide_the_method(header: str) -> None:
    """The value comes from an injected variable: the guard cannot see it is GET, so it is refused."""
    verdict = command_guard.check(f'curl -sf -H "{header}: $JIRA_API_TOKEN" https://api.example.com/x', INJECTED)
    assert not verdict.allowed
