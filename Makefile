# factorizer-nb: set-up, the reproduction job, tests and benchmarks.
# The targets that run notebooks are batches of one Snakemake workflow (workflow/, config/pipeline.yaml): nothing up to date
# reruns; EXECUTOR=slurm submits every job to a Slurm cluster; JOBS=N runs N jobs side by side where the cores allow
# (each uses THREADS threads); SNAKEMAKE_ARGS=--dry-run shows what would run; make batch BATCH=<name> runs any batch.
#   make reproduce            set up, then run nbs/paper/ with papermill for LANGS (default: en) on PROFILE (default: small), then
#                             print the reproduction report (this run against the committed one, within measured tolerances)
#   make test                 set up, then run the notebooks' tests (nbdev-test) and tests/ (pytest) but the slow ones
#   make test-slow            the slow end-to-end tests (pytest -m slow), transformers' own tokenizer tests among them
#   make figures              every committed figure and table of the main job again from the pinned artefacts (no training)
#   make pin                  make reproduce for LANGS, pinning what it trains in data/ledger/<lang>-small/ (commit it)
#   make seed-spread          the main job under 5 seeds: the spread the reproduction report's tolerances come from
#   make lab                  JupyterLab on the project root and its kernel (PORT=8888, LAB_ARGS=--no-browser; --allow-root as root),
#                             with tqdm's widgets, no news prompt, and notebooks under nbs/ saved clean (nbs/infra/89_lab)
#   make evaluate             any tokenizer through the papers' evaluations, beside the four families (nbs/paper/eval/60_your_tokenizer):
#                             TOKENIZER= a tokenizer.json, transformers folder, sentencepiece .model, .tiktoken file, FACTORIZER
#                             vocabulary or tiktoken encoding name (cl100k_base); LANGS (default en); BUDGET=quick (default) or parser;
#                             SEEDS (the parser's, default 42); one report per language in runs/eval/<name>-<lang>-<budget>/
#   make readme               write README.md from nbs/index.ipynb
#   make results-index        write figures/results_index.md and .csv from the committed CSVs (every job below ends with it)
#   make docs                 the rendered notebooks, figures and tables as a site in _docs/ (make docs-check: open it in headless Chromium)
#   make sweep                the small-profile sweep (nbs/paper/heavy/17_profile_sweep, about 50 minutes on 2 cores)
#   make lm                   the language-model experiments (nbs/paper/lm/, English; PROFILE=paper PROCESSES=8 on 8 GPUs); also
#                             make reproduce EXPERIMENTS=lm
#   make lm-sweep             the sweep that sized the cpu language-model profile (nbs/paper/heavy/18_lm_sweep, 6 minutes per setting)
#   make lm-gates             issue #27's gates on PROFILE (default here: cpu): BPE and FACTORIZER pretrained about 1 and 1.5 hours,
#                             against unigram perplexity and the from-scratch parser, with gate 2's controls for both, one fine-tuning
#                             seed (the lm-gates batch of config/pipeline.yaml: what figures/cpu ran) (nbs/paper/lm/44_lm_gates), resumable, into runs/en-cpu/ and figures/cpu/;
#                             every result recorded in data/ledger/en-cpu/lm/ (commit it), so a rerun needs no runs/
#   make factorial            FACTORIZER's segmentation and embedding crossed on from-scratch parsers trained to a plateau (issue #28;
#                             profile plateau, nbs/paper/heavy/19_factorial; the medium VQ-VAE, trained once in runs/en-grid/ladder/ and
#                             shared with make ladder), resumable, into runs/en-plateau/ and figures/plateau/; each finished parser
#                             is recorded in data/ledger/en-plateau/ (commit it: a later run reads it back, even without runs/)
#   make fig4-plateau         Figure 4 at the plateau setting (issue #28 §3; nbs/paper/41_fig4_parser on profile plateau with the ladder's
#                             medium VQ-VAE on the whole word list, its lowest split ratio): 4 alpha_split values, BPE, Unigram LM and
#                             SaGe at 4,096 and 32,768, 3 seeds, 2 workers, resumable, recorded in data/ledger/en-plateau/
#                             (19_factorial's BPE cells are read back, not retrained)
#   make factorial-large      19_factorial with the ladder's large VQ-VAE on the whole word list, the best point by the tokenizer
#                             measures (issue #28 §2; profile plateau_large, recorded in data/ledger/en-plateau_large/): FACTORIZER's
#                             two cells and the BPE triplet cells are trained (12 parsers, about 6 hours on 2 cores: one row per
#                             FACTORIZER subword is 45 M embedding parameters), BPE's plain cells are read back from en-plateau
#   make fig4-plateau-large   Figure 4 at the plateau with that VQ-VAE (issue #28 §3): FACTORIZER's 4 alpha_split points (alpha_split
#                             = 0.1 is factorial-large's cell), BPE, Unigram LM and SaGe read back from en-plateau; about 2 hours
#   make ladder               FACTORIZER against VQ-VAE compute (issue #28 §1; nbs/paper/heavy/20_vq_ladder, profile grid): VQ-VAE profiles tiny
#                             to large on the top-50,000 and the whole word list, their measures and parsers, resumable; each finished
#                             point and parser is recorded in data/ledger/en-grid/ (commit it: the figure is rebuilt without runs/)
#   make compute-study        issue #28 in the order of its budget: make factorial, then make ladder, then make fig4-plateau; each
#                             resumes where it stopped, so rerunning this after an interruption goes on from there
#   make parser-grid          the from-scratch parser's fuller CPU grid (profile grid: 3 seeds, 6 epochs; en, gd, tr, zh, no), resumable,
#                             into runs/<lang>-grid/ and figures/grid/
#   make sage-paper           SaGe at Table 6's sizes (20,000 -> 16,000) on the English Wikipedia text offline (nbs/paper/21_sage, profile
#                             sage_paper), resumable, into runs/en-sage_paper/ and figures/sage_paper/
#   make paper-vq             the paper-compute VQ-VAE on a GPU (EXECUTOR=slurm: a cluster's), recorded in the ladder's ledger
#   make gpu-check            time the paper profile on a GPU (nbs/infra/96_gpu_check: VQ-VAE steps, LM steps, vocabulary inference over
#                             all 256^3 triplets), into figures/gpu/; about 6 minutes on one H100, set-up included (docs/timings.md)
#   make paper-words          the paper profile's whole word list for the paper-compute VQ-VAE run on a GPU (nbs/infra/98_paper_run,
#                             docs/development.md), into runs/paper_words.tsv.xz
#   make medium               the FACTORIZER notebooks (11-16) for English on the medium profile (about 2 h 20 min on 2 cores,
#                             resumable), into runs/en-medium/ and figures/medium/, pinned in data/ledger/en-medium/pins/
#   make device-bundle        what the paper-compute VQ-VAE run carries to a GPU machine (.device/), and the travel report: working
#                             tree, bundle and sum, failing over 56 MiB of the 64 MiB a GPU machine is sent (docs/development.md)
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
LANGS ?= en
PROFILE ?= small

# Data directory: $FACTORIZER_NB_DATA if set, else the offline mirror beside the checkout if there is one,
# else settings.ini's data_dir (fill it with `$(BIN)/python -m factorizer_nb.core.sources download`).
ifeq ($(FACTORIZER_NB_DATA),)
ifneq ($(wildcard ../shared/data/MANIFEST.tsv),)
export FACTORIZER_NB_DATA := $(abspath ../shared/data)
endif
endif

.PHONY: batch paper-vq workflow-check evaluate device-bundle paper-words setup setup-hf-suite lock docs docs-check results-index reproduce figures pin seed-spread check-figures sweep lm-sweep lm-gates factorial factorial-large fig4-plateau-large fig4-plateau ladder compute-study medium sage-paper gpu-check parser-grid lm test test-slow check-outputs check-sync readme bench data lab clean-runs

# Reinstalls only when pyproject.toml's or requirements.lock's content changed (nbdev-export rewrites pyproject.toml, which would defeat a timestamp).
# Every dependency, transitive ones included, comes from requirements.lock (exact versions and sha256 hashes; `make lock`).
setup:
	@cat pyproject.toml requirements.lock | cmp -s - $(VENV)/.installed || { \
	  $(PYTHON) -m venv $(VENV) && \
	  $(BIN)/pip install -q --require-hashes -r requirements.lock && \
	  $(BIN)/pip install -q --no-deps -e . && \
	  $(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "factorizer-nb (python3)" >/dev/null && \
	  $(BIN)/python -m factorizer_nb.infra.lab --install-only && \
	  cat pyproject.toml requirements.lock > $(VENV)/.installed; }

# Re-resolve requirements.lock from pyproject.toml (uv reads the package indexes from UV_INDEX_URL, UV_EXTRA_INDEX_URL, UV_FIND_LINKS).
lock: setup
	$(BIN)/pip install -q uv
	UV_FIND_LINKS="$${UV_FIND_LINKS:-$$PIP_FIND_LINKS}" $(BIN)/uv pip compile pyproject.toml --extra experiments --extra hf --extra eval --extra workflow --extra dev --generate-hashes --python-version 3.11 --index-strategy unsafe-best-match --no-header -o requirements.lock

# The pipeline (workflow/Snakefile, Snakemake): each target below runs a batch of config/pipeline.yaml. Up to date by
# content (.snakemake/ keeps what each job ran with): a second run runs no job. EXECUTOR=slurm submits every job to a Slurm
# cluster (workflow/profiles/slurm); JOBS runs that many jobs side by side where the cores allow (each job has THREADS);
# SNAKEMAKE_ARGS goes to Snakemake as it is (--dry-run, --forceall, --summary).
EXECUTOR ?= local
JOBS ?= 1
THREADS ?= 2
SNAKEMAKE_ARGS ?=
PARAMS ?=
NPROC := $(shell $(PYTHON) -c "import os; print(len(os.sched_getaffinity(0)))" 2>/dev/null || nproc)
LOCAL_CORES = $(shell echo $$(( $(JOBS) * $(THREADS) < $(NPROC) ? $(JOBS) * $(THREADS) : $(NPROC) )))
EXECUTION = $(if $(filter slurm,$(EXECUTOR)),--workflow-profile workflow/profiles/slurm $(if $(filter-out 1,$(JOBS)),--jobs $(JOBS)),\
	$(if $(filter local,$(EXECUTOR)),--cores $(LOCAL_CORES),$(error EXECUTOR is local or slurm, not $(EXECUTOR))))
# $(call pipeline,BATCH,EXTRA CONFIG): run a batch for LANGS on PROFILE
pipeline = workflow/run.sh $(BIN)/snakemake --snakefile workflow/Snakefile $(EXECUTION) $(SNAKEMAKE_ARGS) --config batch=$(1) \
	langs="$(LANGS)" profile=$(PROFILE) threads=$(THREADS) $(if $(PARAMS),'parameters={$(PARAMS)}') $(2)

reproduce: setup
ifeq ($(EXPERIMENTS),lm)
	$(MAKE) lm
else
	$(call pipeline,reproduce)
endif

# The main job drawn from the pinned artefacts (data/ledger/<lang>-small/pins/, parser records beside them): every figure and table of
# each pinned language, training nothing, in runs/pinned/, and English's medium profile when data/ledger/en-medium/pins/ holds it;
# the CSVs come out byte for byte as committed on any machine.
# `make pin` trains what is not pinned yet for LANGS (as make reproduce does) and pins it: commit data/ledger/ with the outputs.
PINNED_LANGS := $(patsubst data/ledger/%-small/pins,%,$(wildcard data/ledger/*-small/pins))
# (config/pipeline.yaml's figures batch: English's Gutenberg B&D tables and its medium profile belong to it too)
figures: setup
	$(call pipeline,figures,pinned_langs="$(PINNED_LANGS)")

# The main job under seeds 43-46 beside the committed 42 (nbs/paper/heavy/22_seed_spread, about 20 minutes a seed on 2 cores, resumable):
# the spread of every main number, figures/table_seed_spread_<lang>.csv, which the reproduction report's tolerances come from.
seed-spread: setup
	$(call pipeline,seed-spread)

pin: setup
	$(call pipeline,pin)

# The language-model experiments (issue #12, nbs/paper/lm/): Tables 1 and 3, the table across four tokenizers and Figure 7, for English on
# PROFILE (small: a 2-core CPU; paper: Table 6 on GPUs, PROCESSES per pretraining run under torchrun), resumable; FACTORIZER's vocabulary
# comes from notebooks 11-12 of the same profile. Also `make reproduce EXPERIMENTS=lm`. On every profile but small, each result (pretraining,
# perplexity, fine-tuning, evaluation) is recorded in data/ledger/en-<profile>/lm/ (commit it: a later run reads it back without runs/).
# The gates notebook (44) runs last, as make lm-gates does, so that its committed outputs stay the gates' own.
# With a ledger, every model is a job of its own (lm_command --complete: pretraining, perplexity, fine-tunings, Figure 6's noise,
# from-scratch parsers), so that a run which loses runs/ costs at most the models in progress; the notebooks then read their
# numbers back from the ledger.
PROCESSES ?= 1
LM_UNLISTED := $(filter-out $(foreach n,44_lm_gates 45_lm_tables 46_fig7_scarcity 47_fig6_lm_noise,nbs/paper/lm/$(n).ipynb),\
	$(wildcard nbs/paper/lm/*.ipynb))
lm: setup
	@test -z "$(LM_UNLISTED)" || { echo "make lm: add $(LM_UNLISTED) to the lm batch of config/pipeline.yaml" >&2; exit 1; }
	$(call pipeline,lm,'parameters={processes: $(PROCESSES)}')

LM_PROFILE ?= cpu
lm-sweep: setup
	$(MAKE) PROFILE=$(LM_PROFILE) BATCH=lm-sweep batch

lm-gates: setup
	$(MAKE) PROFILE=$(LM_PROFILE) BATCH=lm-gates batch

factorial: setup
	$(call pipeline,factorial)

compute-study: setup
	$(call pipeline,compute-study)

factorial-large: setup
	$(call pipeline,factorial-large)

fig4-plateau-large: setup
	$(call pipeline,fig4-plateau-large)

fig4-plateau: setup
	$(call pipeline,fig4-plateau)

# issue #28 §1: FACTORIZER against VQ-VAE compute (profiles tiny, small, medium, large; top-50,000 and whole word list), parsers at the grid
# setting, each recorded when finished in data/ledger/en-grid/ (commit it); PARAMS="word_lists: 50000" finishes one list first,
# PARAMS="leave_out: large-all" draws the figure without a point not yet measured (named in its caption)
ladder: setup
	$(call pipeline,ladder)

sweep: setup
	$(call pipeline,sweep)

medium: setup
	$(call pipeline,medium)

# The paper-compute VQ-VAE run's word list (issue #64; nbs/infra/98_paper_run): the paper profile's whole cased list, carried to a GPU
# with the wheels of docs/development.md, where `python -m factorizer_nb.infra.paper_run --words runs/paper_words.tsv.xz --out $$OUT` runs
paper-words: setup
	$(BIN)/python -m factorizer_nb.infra.paper_run --export-words runs/paper_words.tsv.xz

# What the paper-compute run carries to a GPU machine (nbs/infra/99_device_bundle): .device/ with the carried pure-Python
# packages and the word list; prints the working tree's size, the bundle's and their sum, and fails over 56 MiB (CI runs it)
device-bundle: setup
	test -f runs/paper_words.tsv.xz || $(MAKE) paper-words
	$(BIN)/python -m factorizer_nb.infra.device_bundle

GPU_PROFILE ?= paper
GPU_NAME ?=
gpu-check: setup
	$(call pipeline,gpu-check,profile=$(GPU_PROFILE) gpu_name="$(GPU_NAME)")

sage-paper: setup
	$(call pipeline,sage-paper)

# The parser's fuller CPU grid (issue #11): Figures 4 and 6 and the parser ablation for en and gd, Figure 4 for tr, zh and no, then the
# cross-language table with ASO (3 seeds per side). Each language trains its small-profile VQ-VAE first (runs/<lang>-grid/).
GRID_NBS := nbs/paper/11_train_vqvae.ipynb nbs/paper/12_vocab_inference.ipynb nbs/paper/41_fig4_parser.ipynb
parser-grid: setup
	$(call pipeline,parser-grid)

# transformers' common tokenizer tests (tests/test_hf_suite.py, a slow test): the locked release's source distribution, fetched
# and checked by its sha256 (recorded in tests/hf_suite/fetch.py) into .cache/transformers_tests/, never committed; offline, a
# local run only warns and the test skips, while under CI=true the fetch fails
setup-hf-suite: setup
	$(BIN)/python tests/hf_suite/fetch.py

# two test workers on 2 cores: one torch (OpenMP) thread and one sentencepiece thread each
TEST_ENV := OMP_NUM_THREADS=1 FACTORIZER_NB_SPM_THREADS=1
# Each notebook's tests run in a fresh process of their own (two at a time, forked from one that has imported torch and the
# rest once: tests/notebook_tests.py), so that none sees another's state (a class one patches, a module one imports), in an
# order shuffled by NB_SEED, which is printed; pytest shuffles tests/ by the same seed (pytest-randomly): `make test
# NB_SEED=<seed>` repeats both orders.
NB_SEED ?= $(shell date +%s)
NB_TESTS = $(shell find nbs -name '*.ipynb' -not -path 'nbs/paper/*' -not -path '*/.*' -not -path '*/_*' | sort)
test: setup setup-hf-suite
	@echo "notebook tests and pytest in the orders of NB_SEED=$(NB_SEED) (pytest-randomly's seed)"
	@$(TEST_ENV) $(BIN)/python tests/notebook_tests.py --workers 2 $$(printf '%s\n' $(NB_TESTS) | shuf --random-source=<(yes $(NB_SEED))) \
	  || { echo "notebook tests failed (NB_SEED=$(NB_SEED))" >&2; exit 1; }
	$(TEST_ENV) $(BIN)/python -m pytest -n 2 --durations 15 -m 'not slow' --randomly-seed=$(NB_SEED) tests \
	  || { echo "pytest failed (NB_SEED=$(NB_SEED))" >&2; exit 1; }

# The long end-to-end tests (whole tiny notebooks, torchrun, the paper-run and GPU-check commands on the CPU, a step of the
# paper profile's LM, a wheel), about 13 minutes of one core; CI runs them.
test-slow: setup setup-hf-suite
	$(TEST_ENV) $(BIN)/python -m pytest -n 2 --durations 5 -m slow --randomly-seed=$(NB_SEED) tests
	@echo "notebook tests in reverse order (make test shuffles them): no notebook's tests depend on another's"
	@$(TEST_ENV) $(BIN)/python tests/notebook_tests.py --workers 2 $$(printf '%s\n' $(NB_TESTS) | tac)

# CI: the exported library, the notebooks and the README must already be in sync and clean.
check-sync: setup
	$(BIN)/nbdev-export
	$(BIN)/nbdev-clean
	$(BIN)/python -m factorizer_nb.infra.readme
	git diff --exit-code -- factorizer_nb nbs pyproject.toml README.md
	test -z "$$(git status --porcelain --untracked-files=normal -- factorizer_nb nbs)"

# Every manifest under figures/ must come from an ancestor of HEAD, a clean tree, and the settings in settings.ini, and
# figures/results_index.{md,csv} must be what the committed CSVs give (results_index --check).
check-outputs: setup
	$(BIN)/python -m factorizer_nb.infra.reporting check
	$(BIN)/python -m factorizer_nb.infra.results_index --check
	$(MAKE) check-figures

# The English main job and its medium profile drawn again from their pinned artefacts must give every committed CSV and
# table byte for byte.
check-figures: setup
	$(call pipeline,check-figures)
	git diff --stat --exit-code -- 'figures/*.csv' 'figures/*.csv.xz' 'figures/*.md'

# Any tokenizer through the papers' evaluations (issue #84; factorizer_nb.eval.evaluate runs nbs/paper/eval/60_your_tokenizer per language)
TOKENIZER ?=
BUDGET ?= quick
SEEDS ?=
evaluate: setup
	@test -n "$(TOKENIZER)" || { echo "make evaluate: name a tokenizer, e.g. make evaluate TOKENIZER=cl100k_base LANGS=en" >&2; exit 2; }
	$(BIN)/python -m factorizer_nb.eval.evaluate --tokenizer "$(TOKENIZER)" --langs $(LANGS) --budget $(BUDGET) --seeds "$(SEEDS)"

# README.md is generated from nbs/index.ipynb (its results table from figures/results_index.csv).
readme: setup
	$(BIN)/python -m factorizer_nb.infra.readme

# The results index (nbs/infra/95_results_index): one row per figure and table of the three papers, then the README that shows its headline rows.
results-index: setup
	$(BIN)/python -m factorizer_nb.infra.results_index
	$(BIN)/python -m factorizer_nb.infra.readme

# The notebooks as a static site in _docs/ (MkDocs + mkdocs-jupyter; see nbs/infra/94_docs), and a check of it in headless Chromium.
docs: setup
	$(BIN)/python -m factorizer_nb.infra.docs build

docs-check: docs
	$(BIN)/python -m factorizer_nb.infra.docs check

bench: setup
	$(BIN)/python benchmarks/bench_encode.py
	$(BIN)/python benchmarks/bench_vqvae.py
	$(BIN)/python benchmarks/bench_parser.py
	$(BIN)/python benchmarks/bench_lm.py

data: setup
	$(BIN)/python -m factorizer_nb.core.sources download

# JupyterLab on the whole checkout (nbs/, runs/, figures/): `make lab PORT=8888 LAB_ARGS=--no-browser`
PORT ?=
LAB_ARGS ?=
lab: setup
	$(BIN)/python -m factorizer_nb.infra.lab $(if $(PORT),--port $(PORT)) $(LAB_ARGS)

clean-runs:
	rm -rf runs

# Any batch of config/pipeline.yaml by name (make batch BATCH=tiny LANGS=gd), and the paper-compute VQ-VAE on a cluster's GPU
# (make paper-vq EXECUTOR=slurm: the word list here, the run on a GPU node, its record into the ladder's ledger: commit it)
BATCH ?= reproduce
batch: setup
	$(call pipeline,$(BATCH))

paper-vq: setup
	$(call pipeline,paper-vq)

# Every batch's DAG, dry run (tests/test_workflow.py runs the same check)
workflow-check: setup
	$(BIN)/python -m pytest -q tests/test_workflow.py -m 'not slow'
