# The two commands of the README: `make demo` and `make test`.
# Each creates its own virtual environment in .venv and installs what it needs.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8000
# the suite runs in this many processes (CI has two cores; each worker holds its own
# OpenCV and renders, so not one per core on a big machine)
TEST_WORKERS ?= 2

.PHONY: demo test lint typecheck unit bench install-pi clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --constraint constraints.txt -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/companion demo --port $(PORT)

lint: $(STAMP)
	$(BIN)/ruff check companion hardware calibration tests

typecheck: $(STAMP)
	$(BIN)/mypy --strict companion/rules
	$(BIN)/mypy companion hardware calibration

unit: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS)

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/companion bench --json

# On the Raspberry Pi: a venv that sees apt's picamera2, the [pi] extra, the service.
install-pi:
	sudo scripts/install-pi.sh

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
