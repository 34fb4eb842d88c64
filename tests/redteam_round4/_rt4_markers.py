"""Written by `python -m muninn.evals.lab.redteam4 --write-markers`: the cases of the last recorded pass
that got through (attacks) or were falsely hit (controls)."""

# Attacks that got through.
THROUGH: dict[str, str] = {
}

# Controls that were redacted, dropped or refused.
FALSE_POSITIVES: dict[str, str] = {
}
