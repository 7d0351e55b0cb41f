# The heavy units as jobs of their own: each language model (downstream.lm_command: pretraining, perplexity,
# fine-tunings, Figure 6's noise, from-scratch parsers, each recorded in data/ledger/en-<profile>/lm/ when done), the
# paper-compute VQ-VAE on a GPU (infra.paper_run, recorded in the ladder's ledger), the GPU check and make evaluate.
# A unit whose records are in the ledger reads them back in seconds, so a rerun costs nothing.
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
            gpu=processes if profile in PIPELINE["gpu_profiles"] else 0,
        shell:
            THREAD_ENV + f" {PYTHON} -m factorizer_nb.downstream.lm_command --lang en --profile {profile} "
            f"--processes {processes} --complete --models {json.dumps(model)} > {{log}} 2>&1 && touch {{output}}"


def _gpu_check_rule(profile, name):
    "Time `profile` on a GPU (nbs/infra/96_gpu_check) into figures/gpu/<name>, which the job rewrites."
    name = name or f"gpu_check_{profile}"
    done = str(ROOT / "runs" / "workflow" / f"{name}.done")
    tables = [str(ROOT / f) for (nb, _, p), outs in COMMITTED.items() if nb == "gpu_check" and p == profile
              for stem, files in outs if Path(stem).name == name for f in files]
    command = f"{PYTHON} -m factorizer_nb.infra.gpu_check --profile {profile}"
    # a named table: measured into a JSON record, then written under that name
    if name != f"gpu_check_{profile}":
        raw = ROOT / "runs" / "workflow" / f"{name}.json"
        command = f"{command} --raw {raw} && {PYTHON} -m factorizer_nb.infra.gpu_check --record {raw} --name {name}"
    rule:
        name: name
        output: done=done, tables=[update(f) for f in tables]
        log: str(ROOT / "runs" / "logs" / f"{name}.log")
        params: fingerprint=hashlib.sha256(json.dumps([SETTINGS_SHA, LIBRARY_SHA]).encode()).hexdigest()
        threads: THREADS
        resources: runtime=30, mem_mb=32000, gpu=0 if profile == "cpu" else 1
        shell: "(" + command + ") > {log} 2>&1 && touch {output.done}"
    return done


PAPER_WORDS = str(ROOT / "runs" / "paper_words.tsv.xz")
PAPER_RUN = ROOT / "runs" / "paper_run"

def _evaluate_rule(run, lang):
    "make evaluate for one language: its report in runs/eval/ (or `out_dir`), a stamp in runs/workflow/evaluate/."
    tokenizer, budget = str(run["evaluate"]), run.get("budget", "quick")
    if not tokenizer: stop("make evaluate: name a tokenizer, e.g. make evaluate TOKENIZER=cl100k_base LANGS=en")
    slug = re.sub(r"\W+", "_", Path(tokenizer).name).strip("_")
    done = str(ROOT / "runs" / "workflow" / "evaluate" / f"{slug}-{lang}-{budget}.done")
    out = run.get("out_dir")
    committed = [str(ROOT / f) for f in subprocess.run(["git", "ls-files", out], cwd=ROOT, capture_output=True,
                                                       text=True).stdout.split()] if out else []
    source = Path(tokenizer) if Path(tokenizer).exists() else None
    key = [SETTINGS_SHA, LIBRARY_SHA, sha256(source) if source else tokenizer, budget, run.get("seeds", "")]
    minutes = 60 if budget == "parser" else 15
    command = (f"{PYTHON} -m factorizer_nb.eval.evaluate --tokenizer {json.dumps(tokenizer)} --langs {lang} "
               f"--budget {budget} "
               f"--seeds {json.dumps(str(run.get('seeds', '')))}" + (f" --out-dir {ROOT / out}" if out else ""))
    rule:
        name: f"evaluate_{slug}_{lang}_{budget}"
        output: done=done, report=[update(f) for f in committed]
        log: str(ROOT / "runs" / "logs" / f"evaluate-{slug}-{lang}-{budget}.log")
        params: fingerprint=hashlib.sha256(json.dumps(key).encode()).hexdigest()
        threads: THREADS
        resources: runtime=minutes, mem_mb=config.get("mem_mb", 8000), gpu=0
        shell: THREAD_ENV + " " + command + " 2>&1 | tee {log}; test ${{PIPESTATUS[0]}} -eq 0 && touch {output.done}"
    return done


for _h in HEAVY:
    if "lm_models" in _h and keeps_ledger(_h["profile"]):
        _up = [str(j.copy) for j in JOBS.values() if j.profile == _h["profile"] and j.nb == "12_vocab_inference"]
        for _m in _h["lm_models"]:
            _lm_rule(_m, _h["profile"], _up)
            HEAVY_TARGETS.append(lm_stamp(_m, _h["profile"]))
    if "evaluate" in _h:
        HEAVY_TARGETS += [_evaluate_rule(_h, lang) for lang in _h["langs"]]
    if "paper_vq" in _h:
        HEAVY_TARGETS.append(str(PAPER_RUN / "recorded.json"))
    if "gpu_check" in _h:
        HEAVY_TARGETS.append(_gpu_check_rule(_h["profile"], _h.get("name")))


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
        runtime=int(config["paper_vq"]["runtime_min"]), mem_mb=32000, gpu=1,
    shell:
        f"{PYTHON} -m factorizer_nb.infra.paper_run --words {{input}} --out {PAPER_RUN} "
        f"--budget {config['paper_vq']['budget_s']} > {{log}} 2>&1"


rule paper_vq_record:
    "The returned run into the ladder's ledger (data/ledger/en-grid/ladder/paper-all/) and figures/gpu/: commit both."
    input: str(PAPER_RUN / "paper_run.json")
    output: str(PAPER_RUN / "recorded.json")
    shell: f"{PYTHON} -m factorizer_nb.infra.paper_run --record {PAPER_RUN} && cp {{input}} {{output}}"
