"""muninn.evals.lab: benchmarks, probes and the corpora harness, run from a checkout; not in the wheel."""
