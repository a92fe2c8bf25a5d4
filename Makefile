# The two commands: `make run` and `make test`. Each target sets up what it needs first.
# `make test-fast` is the inner loop: lint, then the unit and tmux tiers only (tests/tiers.py),
# in parallel, then the few that measure time alone (scripts/test --fast).
# PYTEST_ARGS passes more to pytest: `make test-fast PYTEST_ARGS="tests/cli -x"`.
.PHONY: run test test-fast lint bench

run:
	@scripts/bootstrap
	@scripts/run

test:
	@scripts/bootstrap --test
	@scripts/test $(PYTEST_ARGS)

# A hundred sends in a row, not the full run's thousand: the same proof of order, a tenth the time.
test-fast:
	@scripts/bootstrap --test
	@ROOST_SEND_COUNT=100 scripts/test --fast $(PYTEST_ARGS)

lint:
	@.venv/bin/ruff check .
	@.venv/bin/ruff format --check .

bench:
	@scripts/bootstrap --bench
	@for b in bench/*.py; do .venv/bin/python "$$b" || exit 1; done
