# The two commands: `make demo` (install + reproduce the built-in experiments into out/)
# and `make test` (install + every check). Everything they need is installed here.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.torpor-installed
# The Rust sources and the presets they embed; the Python package is installed editable, so
# editing a .py file needs no rebuild.
SOURCES := $(shell find crates presets -type f \( -name '*.rs' -o -name '*.toml' \) 2>/dev/null) Cargo.toml Cargo.lock pyproject.toml

.PHONY: install demo test bench fuzz clean

install: $(STAMP)

PACKAGES := .venv/.packages

# Install steps print one line each; a failing step prints its log (.venv/*.log).
$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "torpor needs Python 3.11+"; exit 1; }
	@echo "install: a Python environment in $(VENV)/"
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/pip install --quiet --upgrade pip

# Re-run when this file changes, so an existing .venv gains packages added here.
$(PACKAGES): $(VENV)/bin/python Makefile
	@echo "install: Python packages (pip)"
	@$(BIN)/pip install --quiet --disable-pip-version-check "maturin>=1.5,<2" "click>=8.1" "rich>=13" "pandas>=2" "pyarrow>=15" "tomli-w>=1" "matplotlib>=3.8" \
		"dask[distributed]>=2024.1" "pytest>=7" "selenium>=4.20" "ruff>=0.4" "mypy>=1.8" "pandas-stubs>=2" \
		"perfetto>=0.10" "protobuf>=4"
	@touch $(PACKAGES)

$(STAMP): $(PACKAGES) $(SOURCES)
	@command -v cargo >/dev/null || { echo "torpor needs a Rust toolchain (cargo)"; exit 1; }
	@echo "install: building torpor (cargo, release; a few minutes the first time)"
	@VIRTUAL_ENV=$(CURDIR)/$(VENV) PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/maturin develop --release --quiet \
		> $(VENV)/build.log 2>&1 || { cat $(VENV)/build.log; exit 1; }
	@touch $(STAMP)

# The five seeds' experiments into out/*/, then the one report beside them; the last line
# printed is that page's path (out/report.html).
demo: install
	@echo "demo: reproducing the five seeds and the phone and laptop into out/"
	@$(BIN)/torpor reproduce all --out out

test: install
	cargo test --workspace --exclude torpor-py
	cargo clippy --workspace --all-targets -- -D warnings
	cargo fmt --all -- --check
	$(BIN)/ruff check python tests
	$(BIN)/ruff format --check python tests
	$(BIN)/mypy python/torpor
	$(BIN)/pytest -q --doctest-modules python/torpor/api.py python/torpor/traces.py tests

bench: install
	$(BIN)/torpor bench

# needs a nightly toolchain and cargo-fuzz; `make test` replays the corpora on stable
fuzz:
	for t in nvme_cli_json smartctl_text fio_iolog scenario_toml ftrace_text blkparse_text disksim_ascii mobile_csv fio_job_file cpu_platform_toml device_preset_toml idle_decide_jsonl sweep_toml; do cargo +nightly fuzz run $$t -- -max_total_time=60 -dict=fuzz/dict/$$t.dict -max_len=4096 -timeout=5 -rss_limit_mb=1024 || exit 1; done
	cargo +nightly fuzz run trace_dat -- -max_total_time=60 -dict=fuzz/dict/trace_dat.dict -max_len=65536 -timeout=5 -rss_limit_mb=1024
	cargo +nightly fuzz run perfetto -- -max_total_time=60 -max_len=65536 -timeout=5 -rss_limit_mb=1024
	cargo +nightly fuzz run packed_text -- -max_total_time=60 -max_len=65536 -timeout=5 -rss_limit_mb=1024

clean:
	rm -rf $(VENV) target out
