# Both entry points bootstrap their own virtualenv so they work on a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test lint readme eval clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

# Reviews every bundled example PR and prints what the bot would say.
demo: $(BIN)/.installed
	@for pr in examples/*.json; do \
	  [ "$$(basename $$pr)" = expected.json ] && continue; \
	  echo "== $$pr"; \
	  $(BIN)/ci-stability review --pr $$pr --fail-level none || exit 1; \
	  echo; \
	done

lint: $(BIN)/.installed
	$(BIN)/ruff check bot rules tests bench
	$(BIN)/mypy

test: lint
	$(BIN)/pytest

# Regenerates the README's generated tables: the rule table and the eval tables.
readme: $(BIN)/.installed
	$(BIN)/python -m bot.cli.readme

# The precision/recall of every rule on the labeled corpus of real PRs, and the log
# extractor's accuracy on the real CI-log corpus.
eval: $(BIN)/.installed
	$(BIN)/ci-stability eval --split all
	$(BIN)/ci-stability eval --logs eval/ci-logs

clean:
	rm -rf $(VENV) build *.egg-info
