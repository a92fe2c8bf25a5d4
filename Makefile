# The two commands: `make run` and `make test`. Each target sets up what it needs first.
# `make test-fast` is the inner loop: lint, then the unit and tmux tiers only (tests/tiers.py),
# in parallel, then the few that measure time alone (scripts/test --fast); it sets up only what
# those run (scripts/bootstrap --fast: no browser, nothing from npm) and runs them where nothing
# more is there (scripts/fast-setup-only).
# PYTEST_ARGS passes more to pytest: `make test-fast PYTEST_ARGS="tests/cli -x"`.
.PHONY: run test test-fast lint bench

run:
	@scripts/bootstrap
	@scripts/run

test:
	@scripts/bootstrap --test
	@scripts/test $(PYTEST_ARGS)

# Fewer inputs, the same proofs; `make test` keeps every count:
# - a hundred sends in a row, not the full run's thousand: the same proof of order, a tenth the time;
# - a fifth of each property test's examples (tests/conftest.py `examples`): 500 roster claims
#   become 100, 400 control-mode streams 80, 300 roster histories 60, 40 hostile hook events 8;
# - a 2 MB flood at a stalled tap viewer, not 20 MB (tests/web/test_tap.py), a tenth the CPU.
test-fast:
	@scripts/bootstrap --fast
	@ROOST_SEND_COUNT=100 ROOST_EXAMPLE_SHARE=0.2 ROOST_FLOOD_BYTES=2000000 scripts/test --fast $(PYTEST_ARGS)

lint:
	@.venv/bin/ruff check .
	@.venv/bin/ruff format --check .

bench:
	@scripts/bootstrap --bench
	@for b in bench/*.py; do .venv/bin/python "$$b" || exit 1; done
