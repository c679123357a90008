# Both entry points bootstrap their own virtualenv so they work on a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test lint readme clean

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

# Regenerates the README's rule table from the registry.
readme: $(BIN)/.installed
	$(BIN)/python -c "import re, pathlib; from bot.cli.rules import rule_table_markdown as t; \
	p = pathlib.Path('README.md'); s = p.read_text(); \
	a, b = '<!-- rules-table:start -->', '<!-- rules-table:end -->'; \
	p.write_text(s[:s.index(a) + len(a)] + '\n' + t() + s[s.index(b):])"

clean:
	rm -rf $(VENV) build *.egg-info
