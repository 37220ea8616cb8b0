# Two entry points: `make demo` and `make test`. Both create .venv on first use, with the CPU
# build of torch (an unpinned torch would pull a multi-GB CUDA build).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
TORCH_PIN := torch==2.13.0
STAMP := $(VENV)/.installed

export TOKENIZERS_PARALLELISM := false
export HF_HUB_DISABLE_TELEMETRY := 1

.PHONY: demo test install clean

$(STAMP): setup.cfg pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH_PIN)"
	$(BIN)/python -m pip install --quiet -e ".[test]" "$(TORCH_PIN)"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/nlgscore bertscore --model minilm -c examples/cands.txt -r examples/refs.txt --seg

test: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q tests

clean:
	rm -rf $(VENV) build dist *.egg-info
