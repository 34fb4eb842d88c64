"""The setup lines a read nobody watches may take (plugins/access/unattended.py): a table of shapes, and the
two ways they run (an environment built in Python, a rebuilt bash script) giving the same result in a real bash."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from muninn.plugins.access import unattended


@pytest.mark.parametrize("line", [
    "export KUBECONFIG=~/.kube/ops.yaml",
    "export A=1 B=2 C",
    "KUBECONFIG=/tmp/ops.yaml",
    "unset AWS_PROFILE",
    "cd /tmp",
    "source ~/.kube/ops.env",
    ". ./ops.env",
    "kubectl config use-context ops",      # dropped: the reader passes --context=
    "kubectl get nodes",                   # a command: shown, not run, as in access exec
    "on the bastion: sudo -i",             # a note
])
def test_safe_shapes_are_taken(line: str) -> None:
    assert isinstance(unattended.plan([line]), unattended.Setup)


@pytest.mark.parametrize("line", [
    "source ~/.kube/env; touch /tmp/PWNED",
    "export A=1 && touch /tmp/PWNED",
    "export A=1 || touch /tmp/PWNED",
    "source env | sh",
    "export A=$(touch /tmp/PWNED)",
    "export A=`touch /tmp/PWNED`",
    "source <(curl -s https://example.com/x)",
    "source env > /tmp/PWNED",
    "export A=1 &",
    "export A=1\ntouch /tmp/PWNED",
    "KUBECONFIG=/tmp/x touch /tmp/PWNED",
    "export -f f",
    "source env extra-argument",
    "cd -",
    "set -o pipefail",
    "alias k=kubectl",
    "kubectx prod-admin",
    "gcloud config set project prod",
    "az account set --subscription prod",
])
def test_unsafe_shapes_are_refused_with_their_step_number(line: str) -> None:
    refused = unattended.plan(["export OK=1", line])
    assert isinstance(refused, unattended.Refused) and refused.n == 2 and refused.text == line.strip()


VALUE_CASES = [
    ("export X='a b*'", "a b*"),
    ("export X=\"it's\"", "it's"),
    ("export X=$HOME/k", f"{os.environ['HOME']}/k"),
    ("export X=${HOME}x", f"{os.environ['HOME']}x"),
    ("export X=~/k", f"{os.path.expanduser('~')}/k"),
    ("export X=pre$UNSET_IN_TEST-post", "pre-post"),
    ("export X='$1 $$ \\n'", "$1 $$ \\n"),
]


@pytest.mark.parametrize("line, expected", VALUE_CASES)
def test_both_ways_give_the_same_value(line: str, expected: str, tmp_path: Path) -> None:
    setup = unattended.plan([line])
    assert isinstance(setup, unattended.Setup)
    env, _, failed = setup.environment(os.environ)
    assert failed is None and env["X"] == expected
    script = setup.script('printf %s "$X"')
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path,
                         env={k: v for k, v in os.environ.items() if k != "UNSET_IN_TEST"})
    assert out.returncode == 0 and out.stdout == expected


def test_a_missing_folder_fails_naming_its_step(tmp_path: Path) -> None:
    setup = unattended.plan(["export A=1", f"cd {tmp_path / 'gone'}"])
    assert isinstance(setup, unattended.Setup)
    _, _, failed = setup.environment(os.environ)
    assert failed is not None and failed.n == 2 and failed.why == "no such folder"
