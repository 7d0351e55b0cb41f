# The heavy units as jobs of their own: each language model (downstream.lm_command: pretraining, perplexity, fine-tunings,
# Figure 6's noise, from-scratch parsers, each recorded in data/ledger/en-<profile>/lm/ as it finishes), the paper-compute
# VQ-VAE on a GPU (infra.paper_run, recorded in the ladder's ledger) and the GPU check. A unit whose records are in the
# ledger reads them back in seconds, so a rerun costs nothing.
HEAVY_TARGETS = []


def _lm_rule(model, profile, after):
    processes = int(config.get("parameters", {}).get("processes", 1))
    rule:
        name: "lm_" + re.sub(r"\W+", "_", f"{profile}_{model}").strip("_").lower()
        input: after
        output: lm_stamp(model, profile)
        log: str(ROOT / "runs" / "logs" / (Path(lm_stamp(model, profile)).stem + f"-{profile}.log"))
        params:
            fingerprint=hashlib.sha256(json.dumps([SETTINGS_SHA, LIBRARY_SHA, model]).encode()).hexdigest(),
        threads: THREADS
        resources:
            runtime=PIPELINE["runtime_min"]["45_lm_tables"], mem_mb=16000,
            gpus=processes if profile in PIPELINE["gpu_profiles"] else 0,
        shell:
            THREAD_ENV + f" {PYTHON} -m factorizer_nb.downstream.lm_command --lang en --profile {profile} "
            f"--processes {processes} --complete --models {json.dumps(model)} > {{log}} 2>&1 && touch {{output}}"


def gpu_check_outputs(profile):
    "The committed tables of the GPU check on `profile` (the one measured on this project's reference GPU)."
    return [str(ROOT / f) for (nb, _, p), outs in COMMITTED.items() if nb == "gpu_check" and p == profile
            for stem, files in outs if stem.endswith(f"_{profile}") for f in files]


PAPER_WORDS = str(ROOT / "runs" / "paper_words.tsv.xz")
PAPER_RUN = ROOT / "runs" / "paper_run"

for _h in HEAVY:
    if "lm_models" in _h and _h["profile"] not in ("small", "tiny"):   # small and tiny keep no ledger: the notebooks train
        _up = [str(j.copy) for j in JOBS.values() if j.profile == _h["profile"] and j.nb == "12_vocab_inference"]
        for _m in _h["lm_models"]:
            _lm_rule(_m, _h["profile"], _up)
            HEAVY_TARGETS.append(lm_stamp(_m, _h["profile"]))
    if "paper_vq" in _h:
        HEAVY_TARGETS.append(str(PAPER_RUN / "recorded.json"))
    if "gpu_check" in _h:
        HEAVY_TARGETS.append(str(ROOT / "runs" / "workflow" / "gpu_check-paper.done"))


localrules: paper_words, paper_vq_record


rule paper_words:
    "The paper profile's whole cased word list, which the GPU job trains on."
    output: PAPER_WORDS
    shell: f"{PYTHON} -m factorizer_nb.infra.paper_run --export-words {{output}}"


rule paper_vq:
    "The paper-compute VQ-VAE (Table 5's model on the whole word list) for config paper_vq.budget_s seconds on one GPU."
    input: PAPER_WORDS
    output: str(PAPER_RUN / "paper_run.json"), str(PAPER_RUN / "vocab_entries.tsv.xz")
    log: str(ROOT / "runs" / "logs" / "paper_vq.log")
    threads: THREADS
    resources:
        runtime=int(config["paper_vq"]["runtime_min"]), mem_mb=32000, gpus=1,
    shell:
        f"{PYTHON} -m factorizer_nb.infra.paper_run --words {{input}} --out {PAPER_RUN} "
        f"--budget {config['paper_vq']['budget_s']} > {{log}} 2>&1"


rule paper_vq_record:
    "The returned run into the ladder's ledger (data/ledger/en-grid/ladder/paper-all/) and figures/gpu/: commit both."
    input: str(PAPER_RUN / "paper_run.json")
    output: str(PAPER_RUN / "recorded.json")
    shell: f"{PYTHON} -m factorizer_nb.infra.paper_run --record {PAPER_RUN} && cp {{input}} {{output}}"


rule gpu_check:
    "Time the paper profile on a GPU (nbs/infra/96_gpu_check) into figures/gpu/."
    output:
        done=str(ROOT / "runs" / "workflow" / "gpu_check-paper.done"),
        tables=[update(f) for f in gpu_check_outputs("paper")],
    log: str(ROOT / "runs" / "logs" / "gpu_check.log")
    threads: THREADS
    resources: runtime=30, mem_mb=32000, gpus=1
    shell: f"{PYTHON} -m factorizer_nb.infra.gpu_check --profile paper > {{log}} 2>&1 && touch {{output.done}}"
