"""muninn.evals.lab: benchmarks, probes and the corpora harness, run from a checkout; not in the wheel.

Only tests and the lab import the lab (tests/test_layout.py); what ships stays in evals/.
"""

from pathlib import Path

EVALS = Path(__file__).resolve().parents[1]
REPO = EVALS.parent
RESULTS = EVALS / "results"
