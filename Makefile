# MONet-open: the two commands a new user needs.
#   make demo   installs what is missing, builds the sim once, runs the default campaign (our link and the
#               MONet-compatible profile) and writes its report.
#   make test   installs what is missing and runs the tests (unit tests of the cores, then the sim SoC).

VENV   := .venv
PY     := $(VENV)/bin/python
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: setup demo test test-fast test-cores test-sim test-long mutants clean

setup:
	@bash tools/setup.sh

# The demo's campaign runs a sim on each core (at most 8).
DEMO_WORKERS := $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 8 ] && n=8; echo $$n)

demo: setup
	$(VENV)/bin/monet campaign run campaigns/default.yaml --results build/demo/campaign --workers $(DEMO_WORKERS) --report

# Independent tests run on every core (pytest-xdist); the 15 slowest are listed at the end.
PYTEST := $(PY) -m pytest -p no:cacheprovider -n auto --durations=15

test: setup
	$(PYTEST)

# The fast tier: everything that needs neither the sim model nor the QEMU image (markers `sim`, `qemu`).
test-fast: setup
	$(PYTEST) -m "not sim and not qemu"

test-cores: setup
	$(PYTEST) litex/cores

test-sim: setup
	$(PYTEST) host/tests

# The documented commands at their full size (marker `long`: whole-card estimates, every sim model's speed,
# go-back-N's BER points, the Linux and cluster campaigns, make demo), skipped by the others; not in CI
# (doc/testing.md).
test-long: setup
	$(PYTEST) --long -m long host/tests/test_documented_commands.py

# Mutation testing (not in CI): per-file scores and the surviving mutants; about an hour on 2 cores (README).
# MUTANTS_ARGS passes options through, e.g. MUTANTS_ARGS="--files host/monet/report/stats.py --sample 100".
mutants: setup
	@$(PY) -c "import cosmic_ray" 2>/dev/null || $(PY) -m pip install -q --disable-pip-version-check -r tools/requirements-mutants.txt
	$(PY) tools/mutants.py $(MUTANTS_ARGS)

clean:
	rm -rf build
