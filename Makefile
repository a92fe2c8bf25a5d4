# The two commands: `make run` and `make test`. Both set up what they need first.
.PHONY: run test lint bench

run:
	@scripts/bootstrap
	@scripts/run

test:
	@scripts/bootstrap --test
	@scripts/test

lint:
	@.venv/bin/ruff check .
	@.venv/bin/ruff format --check .

bench:
	@scripts/bootstrap
	@for b in bench/*.py; do .venv/bin/python "$$b" || exit 1; done
