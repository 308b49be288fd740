# Two commands for a fresh machine: `make reproduce` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 2
STAMP := $(VENV)/.storyeval-env

.PHONY: env reproduce test test-slow test-all bench lint report report-released clean check-env check-config bytecode

env: $(STAMP)

# torch first and alone: 2.13.0 is a CPU wheel on disk; any other spec pulls GBs of CUDA. The pinned rest with uv,
# which installs them in a sixth of pip's time (docs/performance.md), or with pip where uv cannot be had.
# Every package's bytecode is written here: where PYTHONDONTWRITEBYTECODE is set (these machines), a module without
# it is compiled again at every import of every process (pandas: 1.06 s instead of 0.34). uv compiles what it
# installs, torch's dependencies too (pinned in requirements.txt, so torch comes without them); torch's thousands of
# files compile in parallel below (4 s) instead of one by one by pip (10 s), its one Python 3.12 file left out.
PURELIB = $$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
$(STAMP): requirements.txt pyproject.toml tools/install_wordnet.sh
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --no-deps --no-compile torch==2.13.0
	$(BIN)/python -m compileall -q -j 0 -x py312_intrinsics $(PURELIB)/torch
	$(BIN)/pip install --quiet uv==0.13.9 && $(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python \
		-r requirements.txt || $(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	bash tools/install_wordnet.sh $(VENV)
	touch $@

# A fresh machine gets its environment from `make reproduce` or `make test` (the first build); an existing one is
# only ever changed by `make env`: the other targets check it and say so when it is older than its requirements.
$(BIN)/snakemake:
	$(MAKE) env

check-env:
	@test -x $(BIN)/snakemake || { echo "make: no environment in $(VENV); run make env"; exit 1; }
	@test $(STAMP) -nt requirements.txt -a $(STAMP) -nt pyproject.toml \
		|| echo "make: $(VENV) is older than requirements.txt or pyproject.toml; run make env to update it"

# The package's bytecode, which its editable install leaves to the first import: where PYTHONDONTWRITEBYTECODE is
# set, every Snakemake start, job and test process would compile it again (0.2 CPU-s a start). Up to date: 0.1 s.
bytecode: $(BIN)/snakemake
	@$(BIN)/python -m compileall -q src

# Config files are data: each one a target passes to Snakemake (config.yaml, CONFIG=...) is checked first, since
# Snakemake evaluates a file's YTE expressions (__use_yte__) while reading it, before any workflow code runs.
CONFIG ?=
CONFIG_FILES := $(wildcard config.yaml) $(CONFIG)

check-config: check-env
	@$(BIN)/python -m storyeval.configfiles $(CONFIG_FILES)

# CONFIG=file(s): run with those config files over config.yaml.
reproduce: $(BIN)/snakemake check-env check-config bytecode
	$(BIN)/snakemake --cores $(CORES) $(if $(CONFIG),--configfile $(CONFIG))

# Lint first: a second or two, before minutes of tests. One pytest worker per core, a test module each
# (pytest-xdist), in the order tests/conftest.py gives them: the SLURM test, which mostly waits on its cluster,
# first, so that the other worker runs the rest meanwhile.
test: $(BIN)/snakemake lint bytecode
	$(BIN)/python -m pytest -n $(CORES) --dist loadfile --no-loadscope-reorder -m "not slow"

# The heavy runs alone (whole workflows, the paper configuration on tiny models): CI runs them after `make test`.
test-slow: $(BIN)/snakemake bytecode
	$(BIN)/python -m pytest -n $(CORES) --dist loadfile --no-loadscope-reorder -m slow

test-all: $(BIN)/snakemake lint bytecode
	$(BIN)/python -m pytest -n $(CORES) --dist loadfile --no-loadscope-reorder

bench: check-env bytecode
	$(BIN)/python bench/bench_analysis.py

# ruff (pyproject.toml) on the Python, snakefmt on the rule files. `snakemake --lint` parses the workflow against
# the data (the mirrors, a probe of the annotations' URL): tests/test_workflow.py runs it and wants it clean.
lint: check-env
	$(BIN)/ruff check .
	$(BIN)/snakefmt --check Snakefile workflow/rules

# The report reads the finished outputs: run the workflow first (nothing to do if it is complete). With
# DATASET=name (and the CONFIG that declares it): that dataset's outputs alone, in report-<name>.html.
DATASET ?=
REPORT_ARGS := $(if $(CONFIG),--configfile $(CONFIG)) $(if $(DATASET),-- dataset_$(DATASET))
REPORT_FILE := $(if $(DATASET),report-$(DATASET).html,report.html)

REPORT_STYLE := --report-stylesheet workflow/report/report.css

report: check-env check-config bytecode
	$(BIN)/snakemake --cores $(CORES) $(REPORT_ARGS)
	$(BIN)/snakemake --report $(REPORT_FILE) $(REPORT_STYLE) $(REPORT_ARGS)
	$(BIN)/python -m storyeval.workflow.report $(REPORT_FILE) $(DATASET)

# HANNA's released scores alone with the reproduction audit (target `released`: minutes, no metric computed).
report-released: check-env bytecode
	$(BIN)/snakemake --cores $(CORES) released
	$(BIN)/snakemake --report report-released.html $(REPORT_STYLE) released
	$(BIN)/python -m storyeval.workflow.report report-released.html "hanna, released scores"

clean:
	rm -rf results logs benchmarks .snakemake report.html report-*.html
