# zkstorm — run `make help` for the targets.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
DEMO_SANDBOX := $(CURDIR)/.demo-sandbox
# the real clusters' pinned jars (tests/real/pom.xml, a profile each), fetched once by make jars
JARS_DIR ?= $(CURDIR)/.cache/jars
JAR_PROFILES := kafka-3.9.2 kafka-2.8.2 storm-2.8.3 hadoop-3.4.1
# what make check leaves out (pyproject.toml names the markers; tests/conftest.py applies them)
CHECK_MARKERS := not spark and not browser and not real_cluster and not slow
# the tests run on this many workers (pytest-xdist), a file at a time each, handed out in the order
# tests/conftest.py gives them (heaviest first; xdist's own reorder, by tests per file, would hand the
# few-test files that start clusters out last); WORKERS=0 runs them in this process
WORKERS ?= 2
PYTEST := $(BIN)/python -m pytest -q -p no:cacheprovider -n $(WORKERS) --dist loadfile --no-loadscope-reorder

.DEFAULT_GOAL := help
.PHONY: help dev demo check test jars bench lint docs docs-generate docs-captures clean

help: ## Show the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-8s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "zkstorm needs Python 3.11 or newer (requires-python): make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@rm -f $(VENV)/.installed-*; touch $@

dev: $(STAMP) ## Create .venv with zkstorm and its dev tools (pyspark, pytest, ruff, mypy)

demo: $(STAMP) ## Start a sandbox ZooKeeper with synthetic Storm+Kafka clusters and inspect it (KEEP=1 keeps it running; REAL=1: real ZooKeeper, Kafka 3.9.2 and Storm 2.8.3 daemons instead, Java 17 needed)
	@if [ -n "$(REAL)" ]; then $(MAKE) --no-print-directory jars; fi
	@bash scripts/demo.sh "$(DEMO_SANDBOX)" "$(KEEP)" "$(REAL)"

check: $(STAMP) ## The suite to run often (about 3 min): unit and ZooKeeper tests; no Spark, browser, real cluster or slow large-tree test
	@bash scripts/test-deps.sh --check
	$(PYTEST) -m "$(CHECK_MARKERS)" $(PYTEST_ARGS)

test: $(STAMP) ## Run every test against a real ZooKeeper, then the ten slowest (needs Java 17+; installs Chromium for the report test)
	@bash scripts/test-deps.sh
	@$(MAKE) --no-print-directory jars
	$(PYTEST) --durations=10 $(PYTEST_ARGS)

jars: $(JAR_PROFILES:%=$(JARS_DIR)/%/.complete) ## Fetch the real clusters' pinned jars (tests/real/pom.xml) into .cache/jars once with Maven; offline after

$(JARS_DIR)/%/.complete: tests/real/pom.xml
	@command -v mvn >/dev/null 2>&1 || { echo "FATAL: Maven is needed once to fetch the $* jars (apt-get install maven)" >&2; exit 1; }
	@rm -rf $(JARS_DIR)/$*
	mvn -q -B -f tests/real/pom.xml -P $* dependency:copy-dependencies -DoutputDirectory=$(JARS_DIR)/$*
	@touch $@

bench: $(STAMP) ## Benchmarks, those with a target first: walk and snapshot vs the sequential walk (35k real-format znodes), history (2 small snapshots; a year of 100k partitions, full, and the nightly update at 30 and 365 nights), a million partitions (as a snapshot file), S3 round trip; then kafka health (100k partitions), snapshots (30k and 300k znodes), offline files vs ZooKeeper's loader (300k), changes vs ZooKeeper's log dumper (400k txns), a KRaft log of a million partitions vs kafka-dump-log (needs make jars); last, every figure against its target with the machine (bench/summary.py)
	$(BIN)/python -u bench/bench_walk.py --json bench-results/walk.json
	$(BIN)/python -u bench/bench_history.py --json bench-results/history.json
	$(BIN)/python -u bench/bench_scale.py --json bench-results/scale.json
	$(BIN)/python -u bench/bench_s3.py --json bench-results/s3.json
	$(BIN)/python -u bench/bench_kafka.py --json bench-results/kafka.json
	$(BIN)/python -u bench/bench_snapshot.py --json bench-results/snapshot.json
	$(BIN)/python -u bench/bench_files.py --json bench-results/files.json
	$(BIN)/python -u bench/bench_changes.py --json bench-results/changes.json
	ZKSTORM_JARS_DIR=$(JARS_DIR) $(BIN)/python -u bench/bench_kraft.py --json bench-results/kraft.json
	$(BIN)/python bench/summary.py bench-results

lint: $(STAMP) ## ruff (format check + lint) and mypy
	$(BIN)/ruff format --check zkstorm tests bench
	$(BIN)/ruff check zkstorm tests bench
	$(BIN)/mypy zkstorm

docs: $(STAMP) ## Build the docs site into site/ (MkDocs + Material, warnings are errors), then open site/index.html
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

docs-generate: $(STAMP) ## Rewrite the docs' generated parts (CLI reference, columns, schemas, examples' output) and SVG captures
	$(BIN)/python scripts/docs_gen.py

docs-captures: $(STAMP) ## Retake the docs' captures: kafka health and changes (rich's SVG), the history report (Spark, Chromium)
	$(BIN)/python scripts/docs_gen.py --captures
	ZKSTORM_UPDATE_GOLDEN=1 $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_history.py -k the_demo_weeks_report_names_its_staged_incidents

clean: ## Remove the virtualenv, caches and demo state
	-ZKSTORM_SANDBOX_DIR=$(DEMO_SANDBOX) $(BIN)/zkstorm sandbox stop 2>/dev/null
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis bench-results site $(DEMO_SANDBOX) .demo-snapshots .demo-week .demo-history .demo-history.html .demo-real *.egg-info
