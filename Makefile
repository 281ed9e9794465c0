# nlcl — build the book, run the tests, run one chapter, benchmark.
# Everything runs in an isolated virtual environment (.venv) created on first use.

PYTHON  ?= $(shell command -v python3.11 || command -v python3)
VENV    ?= .venv
BIN     := $(VENV)/bin
PROFILE ?= ci
JOBS    ?= 2
STAMP   := $(VENV)/.installed

.PHONY: help setup book book-bench test linkcheck run seed-sweep held-out-full bench list clean distclean

help:
	@echo "make book              execute every chapter (PROFILE=$(PROFILE), JOBS=$(JOBS)) and build _build/html"
	@echo "make test              run the test suite (PYTEST_ARGS='-m browser' for the browser test of the built site)"
	@echo "make linkcheck         Sphinx's link check of the built book (after make book)"
	@echo "make run CHAPTER=id ARGS='-p name value'   re-run one chapter with parameters"
	@echo "make seed-sweep CHAPTER=id   run the chapter's ci profile at base seeds 0..4 into results/seed-sweeps/"
	@echo "make held-out-full     every chapter's full profile at 3 freshly drawn held-out seeds into results/held-out-full/ (ARGS='--workers 3')"
	@echo "make list              list the chapters"
	@echo "make bench             benchmark the token-task trainer (WORKERS=$(WORKERS) processes; ARGS='--quick')"
	@echo "make book-bench        time the whole book (PROFILE, JOBS) and write results/book-<profile>-bench-<cpu|gpu>.json"
	@echo "make clean             remove _build;  make distclean  also removes $(VENV)"

# Install nlcl (editable) with the book and test extras; torch is pinned by constraints.txt.
$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[book,test]"
	$(BIN)/python -c "import nlcl.harness.run.notebook as p; p.ensure_kernel()"
	touch $@

setup: $(STAMP)

book: $(STAMP)
	$(BIN)/nlcl book --profile $(PROFILE) --jobs $(JOBS)

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

linkcheck: $(STAMP)
	@test -f _build/staging/_config.yml || (echo "make linkcheck: build the book first (make book)"; exit 2)
	$(BIN)/jupyter-book build _build/staging --builder linkcheck --path-output _build/linkcheck
	@echo "make linkcheck: report in _build/linkcheck/_build/html/output.txt"

run: $(STAMP)
	@test -n "$(CHAPTER)" || (echo "usage: make run CHAPTER=<id> [ARGS='-p name value ...'] [PROFILE=ci|full]"; exit 2)
	$(BIN)/nlcl run $(CHAPTER) --profile $(PROFILE) $(ARGS)

seed-sweep: $(STAMP)
	@test -n "$(CHAPTER)" || (echo "usage: make seed-sweep CHAPTER=<id> [ARGS='--seeds 0..9']"; exit 2)
	OMP_NUM_THREADS=1 $(BIN)/python -m nlcl.harness.records.seed_sweeps $(CHAPTER) --workers $(WORKERS) $(ARGS)

# Paper scale at held-out seeds: from a clean, committed tree; the seeds are drawn when it starts.
held-out-full: $(STAMP)
	$(BIN)/python -m nlcl.harness.records.held_out run --profile full $(ARGS)

list: $(STAMP)
	$(BIN)/nlcl list

# One worker process per core (1 torch thread each) is the fastest way to train the token grid on CPU.
WORKERS ?= $(shell nproc 2>/dev/null || echo 1)

bench: $(STAMP)
	$(BIN)/nlcl bench --workers $(WORKERS) $(ARGS)

book-bench: $(STAMP)
	$(BIN)/python -m nlcl.bench.book --profile $(PROFILE) --jobs $(JOBS) $(ARGS)

clean:
	rm -rf _build

distclean: clean
	rm -rf $(VENV)
