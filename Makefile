# Each target creates .venv itself: on a fresh clone with only python3, `make demo` and `make test`
# are all there is to do.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SPARK_STAMP := $(VENV)/.spark-installed
# the demo's benchmark: at least 400 validated tasks per domain (about 5 minutes of dbt on 2 cores)
DEMO_TARGET ?= 1800
export DBT_SEND_ANONYMOUS_USAGE_STATS := False
export DO_NOT_TRACK := 1

.PHONY: install demo docs docs-serve docs-check docs-images readme test test-postgres test-spark test-dbt112 lint bench dist clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip uninstall --quiet --yes dptool 2>/dev/null || true  # this checkout under its former distribution name
	$(BIN)/pip install --quiet -e '.[dev,fast,inspect]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/dbt deps --project-dir . --profiles-dir .
	$(BIN)/dbt build --project-dir . --profiles-dir .
	$(BIN)/dptool generate --project-dir . --out bundle --target $(DEMO_TARGET)
	$(BIN)/dptool ablate pairing --project-dir . --limit 100 bundle

# the provenance of every gold answer, in dbt docs (after `make demo`); the var enables the gold models (disabled
# otherwise, so that no everyday dbt command builds them), and their pages need their compiled SQL and columns.
# `make docs-serve` serves what was generated; DOCS_PROJECT: another project's folder (its profiles.yml there too).
# A Ctrl-C stops the server and ends make quietly (dptool.project.docs_serve)
DOCS_PROJECT ?= .
DOCS_PORT ?= 8080
DOCS_SERVE_FLAGS ?=
DOCS_SERVE = $(BIN)/python -m dptool.project.docs_serve --project-dir $(DOCS_PROJECT) --profiles-dir $(DOCS_PROJECT) \
	--port $(DOCS_PORT) $(DOCS_SERVE_FLAGS)
docs: $(STAMP)
	$(BIN)/dbt docs generate --project-dir $(DOCS_PROJECT) --profiles-dir $(DOCS_PROJECT) --vars '{dptool_gold: true}'
	$(DOCS_SERVE)

docs-serve: $(STAMP)
	$(DOCS_SERVE)

# what a reviewer reads, in headless Chromium (Debian's `chromium`): dbt docs of the whole demo (a gold model, the
# overview dptool_tasks, a data product and a derived column), report.html of a base-sql score run, the graph page
# and compare.html (base-sql against gold-sql), checked and photographed into target/docs-check/img (a check changes
# no tracked file); builds the demo first when there is no bundle. `make docs-images` does the same and writes the
# photographs into docs/img, where the README and the docs pages show them
docs-check: $(STAMP)
	test -f bundle/tasks.jsonl || $(MAKE) demo
	$(BIN)/python -m tests.docs_pages --project-dir . --bundle bundle --out target/docs-check/img

docs-images: $(STAMP)
	test -f bundle/tasks.jsonl || $(MAKE) demo
	$(BIN)/python -m tests.docs_pages --project-dir . --bundle bundle --out docs/img

# the README's tour (its marked sections) from a real run: `make demo` with its log, recorded into docs/tour.json by
# tests/readme.py and rendered into README.md, then `make test` (tests/test_readme.py holds README, tour and code to
# each other) and its counts recorded and rendered too
readme: $(STAMP)
	mkdir -p target
	start=$$(date +%s); $(MAKE) demo > target/readme-demo.log 2>&1 || { tail -20 target/readme-demo.log; exit 1; }; \
	  echo $$(( $$(date +%s) - start )) > target/readme-demo.seconds
	$(BIN)/python -m tests.readme record --demo-log target/readme-demo.log --demo-seconds $$(cat target/readme-demo.seconds)
	$(BIN)/python -m tests.readme render
	$(MAKE) test > target/readme-test.log 2>&1 || { tail -40 target/readme-test.log; exit 1; }
	$(BIN)/python -m tests.readme record --test-log target/readme-test.log
	$(BIN)/python -m tests.readme render

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/pytest -n 2 --dist loadgroup

# the subscriptions fixture on PostgreSQL: the tests start a throw-away server on loopback themselves
# (Debian's postgresql package; .ci/run installs it and starts one for the whole suite)
test-postgres: $(STAMP)
	DPTOOL_REQUIRE_POSTGRES=1 $(BIN)/pytest -q tests/test_postgres.py

# dbt-spark and pyspark (~450 MB) into the same .venv, only for test-spark: `make test` then runs the Spark tests
# too (without them, or without Java, they skip)
$(SPARK_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e '.[dev,fast,spark]'
	touch $(SPARK_STAMP)

# the dbt package's integration tests, the subscriptions fixture and the demo's ecommerce domain built and generated on
# Apache Spark (bundles compared with DuckDB's):
# a local SparkSession in the test process (dbt-spark's session method), nothing started outside the machine;
# needs Java 17+ (.ci/run installs Debian's openjdk-17-jre-headless), and there a skip is a failure
test-spark: $(SPARK_STAMP)
	DPTOOL_REQUIRE_SPARK=1 $(BIN)/pytest -q tests/test_spark_dbt_package.py tests/test_spark.py tests/test_spark_ecommerce.py

# the dbt-facing tests on dbt-core 1.12, in a venv of their own (.venv-dbt112): the dbt package's integration tests,
# the semantic-layer imports, MetricFlow parity, generate end to end and the gold build. dbt-core 1.12 goes in without
# dbt-core-experimental-parser, whose build downloads a binary from outside the registry (used only under
# --use-v2-parser): tests/dbt112_venv.py says how, and fails unless `pip check` names that package alone
DBT112 := .venv-dbt112
DBT112_TESTS := tests/test_dbt_versions.py tests/test_dbt_package.py tests/test_semantic.py tests/test_semantic_kinds.py \
	tests/test_generate_e2e.py tests/test_gold_build.py tests/test_postgres.py
$(DBT112)/.installed: pyproject.toml tests/dbt112_venv.py
	rm -rf $(DBT112)
	$(PYTHON) -m venv $(DBT112)
	$(DBT112)/bin/pip install --quiet --disable-pip-version-check --upgrade pip packaging
	$(DBT112)/bin/python tests/dbt112_venv.py $(DBT112)
	touch $@

test-dbt112: $(DBT112)/.installed
	DPTOOL_REQUIRE_DBT=1.12 $(DBT112)/bin/pytest -n 2 --dist loadgroup $(DBT112_TESTS)

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_generate.py

# the wheel and the sdist of dbt-dptool into $(DIST), built by `build` in an isolated environment (setuptools from
# the package index, or from the local one pip is configured with), with `build` itself in a venv of its own
DIST ?= dist
DIST_VENV ?= target/dist-venv
dist:
	rm -rf $(DIST) $(DIST_VENV)
	$(PYTHON) -m venv $(DIST_VENV)
	$(DIST_VENV)/bin/pip install --quiet --disable-pip-version-check build
	$(DIST_VENV)/bin/python -m build --outdir $(DIST) .

clean:
	rm -rf target dbt_packages logs bundle *.duckdb dist build *.egg-info
