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

.PHONY: demo test lint typecheck unit bench eval-sets eval eval-stands eval-mitsuba install-pi clean

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

# The raycast evaluation sets (tests/vision/raycast.py, a renderer written from the
# spec alone): 24 photos per seed and kind, rendered once into $(SETS) (a few minutes a
# set on one core; a set already there is kept), then read: a CSV of photos and one of
# sites per set (docs/vision-errors.md measures the reader on these).
SETS ?= .eval-sets
SET_SEEDS ?= 0 100 9000 9300 9500 14000 15000
SET_FOLDERS := $(foreach s,$(SET_SEEDS),$(foreach k,mounted phone,$(SETS)/rc_$(k)_$(s)))

eval-sets: $(STAMP)
	@for d in $(SET_FOLDERS); do \
	  [ -f $$d/.rendered ] && continue; \
	  k=$${d##*/rc_}; seed=$${k##*_}; kind=$${k%_*}; \
	  echo "rendering $$d"; \
	  $(BIN)/python -m tests.vision.raycast $$d --kind $$kind --n 24 --seed $$seed \
	    > /dev/null && touch $$d/.rendered || exit 1; \
	done

eval: eval-sets
	$(BIN)/companion evaluate $(foreach d,$(SET_FOLDERS),--folder $(d)) \
	  --csv $(SETS)/photos.csv --sites $(SETS)/sites.csv --workers $(TEST_WORKERS)

# The live table on games the ray tracer photographed from a stand (tests/replay/raygame.py,
# 16 moves a game, about a minute each to render; a game already there is kept), each
# filmed for the controller with an arm between stills (tests/controller/raystand.py):
# the moves recorded right, and the wrong ones marked or not for the players.
STAND_SEEDS ?= 49 52 53 54 55 56 57 58 59 60 61 62 63 64 65
STAND_FOLDERS := $(foreach s,$(STAND_SEEDS),$(SETS)/stand_$(s))

eval-stands: $(STAMP)
	@for d in $(STAND_FOLDERS); do \
	  [ -f $$d/truth.json ] && continue; \
	  echo "rendering $$d"; \
	  $(BIN)/python -m tests.replay.raygame $$d --players 2 --turns 16 \
	    --seed $${d##*_} --kind mounted || exit 1; \
	done
	$(BIN)/python -m tests.controller.raystand $(STAND_FOLDERS)

# Photos from a fourth renderer, Mitsuba 3's path tracer (tests/vision/mitsuba_table.py,
# written from the spec alone; it imports nothing from companion): a large download
# (about 0.5 GB in its own venv) and 30-100 s a photo on two cores, so not part of
# `make test`. MTS_N photos per seed and kind, rendered once into $(SETS) (a set
# already there is kept), then read as `make eval` reads its sets.
MTS_VENV ?= .venv-mitsuba
MTS_SEEDS ?= 100
MTS_N ?= 6
MTS_SPP ?= 32
MTS_FOLDERS := $(foreach s,$(MTS_SEEDS),$(foreach k,mounted phone,$(SETS)/mts_$(k)_$(s)))

$(MTS_VENV)/.installed:
	$(PYTHON) -m venv $(MTS_VENV)
	$(MTS_VENV)/bin/python -m pip install --quiet 'mitsuba==3.9.1' opencv-python-headless
	touch $@

eval-mitsuba: $(STAMP) $(MTS_VENV)/.installed
	@for d in $(MTS_FOLDERS); do \
	  [ -f $$d/.rendered ] && continue; \
	  k=$${d##*/mts_}; seed=$${k##*_}; kind=$${k%_*}; \
	  echo "rendering $$d"; \
	  $(MTS_VENV)/bin/python tests/vision/mitsuba_table.py $$d --kind $$kind --n $(MTS_N) \
	    --seed $$seed --spp $(MTS_SPP) > /dev/null && touch $$d/.rendered || exit 1; \
	done
	$(BIN)/companion evaluate $(foreach d,$(MTS_FOLDERS),--folder $(d)) \
	  --csv $(SETS)/mitsuba.csv --sites $(SETS)/mitsuba-sites.csv --workers $(TEST_WORKERS)

# On the Raspberry Pi: a venv that sees apt's picamera2, the [pi] extra, the service.
install-pi:
	sudo scripts/install-pi.sh

clean:
	rm -rf $(VENV) $(MTS_VENV) .pytest_cache .mypy_cache .ruff_cache
