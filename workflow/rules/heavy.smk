# The heavy units as jobs of their own: each language model's pretraining, then its perplexity, fine-tunings, Figure 6's
# noise and from-scratch parsers as jobs of their own (downstream.lm_command --parts, each recorded in
# data/ledger/en-<profile>/lm/ when done), the
# paper-compute VQ-VAE on a GPU (infra.paper_run, recorded in the ladder's ledger), the GPU check and make evaluate.
# A unit whose records are in the ledger reads them back in seconds, so a rerun costs nothing.
HEAVY_TARGETS = []


def _lm_rule(model, profile, part, after):
    "One part of one language model's work (its pretraining, perplexity, fine-tunings, noise, or parsers from scratch)."
    processes = int(config.get("parameters", {}).get("processes", 1))
    gpus = (processes if part == "pretraining" else 1) if profile in PIPELINE["gpu_profiles"] else 0
    rule:
        name: "lm_" + re.sub(r"\W+", "_", f"{profile}_{model}").strip("_").lower() + f"_{part}"
        input: after
        output: lm_stamp(model, profile, part)
        log: str(ROOT / "runs" / "logs" / f"lm-{profile}-{Path(lm_stamp(model, profile, part)).stem}.log")
        params:
            fingerprint=hashlib.sha256(json.dumps([SETTINGS_SHA, LIBRARY_SHA, model, part]).encode()).hexdigest(),
        threads: THREADS
        resources:
            runtime=PIPELINE["runtime_min"]["45_lm_tables"], mem_mb=16000, gpu=gpus,
        shell:
            THREAD_ENV + f" {PYTHON} -m factorizer_nb.downstream.lm_command --lang en --profile {profile} "
            f"--processes {processes} --complete --parts {part} --models {json.dumps(model)} > {{log}} 2>&1 "
            "&& touch {output}"


def lm_tokenizers_stamp(profile):
    return str(ROOT / "runs" / "workflow" / f"lm-{profile}" / "tokenizers.done")


def _lm_tokenizers_rule(models, profile, after):
    "The models' tokenizers, trained once before their pretrainings, which would otherwise train them side by side."
    rule:
        name: f"lm_{profile}_tokenizers"
        input: after
        output: lm_tokenizers_stamp(profile)
        log: str(ROOT / "runs" / "logs" / f"lm-{profile}-tokenizers.log")
        params: fingerprint=hashlib.sha256(json.dumps([SETTINGS_SHA, LIBRARY_SHA, models]).encode()).hexdigest()
        threads: THREADS
        resources: runtime=60, mem_mb=16000, gpu=0
        shell:
            THREAD_ENV + f" {PYTHON} -m factorizer_nb.downstream.lm_command --lang en --profile {profile} "
            f"--tokenizers-only --models {json.dumps(','.join(models))} > {{log}} 2>&1 && touch {{output}}"


def _lm_rules(models, profile, after):
    """A language model's pretraining, then each part the notebooks ask of it as a job of its own (the noise after the
    fine-tunings, whose parsers it scores): the stamps of all of them."""
    _lm_tokenizers_rule(models, profile, after)
    stamps = [lm_tokenizers_stamp(profile)]
    for model in models:
        _lm_rule(model, profile, "pretraining", [lm_tokenizers_stamp(profile)])
        from factorizer_nb.downstream.lm_experiments import model_parts
        for part in model_parts(model):
            first = [lm_stamp(model, profile, "pretraining")] + ([lm_stamp(model, profile, "finetune")]
                                                                  if part == "noise" else [])
            _lm_rule(model, profile, part, first)
        stamps += lm_stamps(model, profile)
    return stamps


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
        HEAVY_TARGETS += _lm_rules(_h["lm_models"], _h["profile"], _up)
    if "evaluate" in _h:
        HEAVY_TARGETS += [_evaluate_rule(_h, lang) for lang in _h["langs"]]
    if "paper_vq" in _h:
        HEAVY_TARGETS.append(str(PAPER_RUN / "recorded.json"))
    if "gpu_check" in _h:
        HEAVY_TARGETS.append(_gpu_check_rule(_h["profile"], _h.get("name")))


def _parser_unit_rule(stamp, command, after, trains):
    "One parser of a tokenizer point and seed into the ledger, or (`trains` False) the build of a notebook's points."
    profile = Path(stamp).parent.name.split("-")[1]
    rule:
        name: "parser_" + re.sub(r"\W+", "_", str(Path(stamp).relative_to(ROOT / "runs" / "workflow" / "parsers")))
        input: [str(JOBS[k].copy) if k in JOBS else k for k in after]
        output: stamp
        log: str(ROOT / "runs" / "logs" / "parsers" / (Path(stamp).parent.name + "-" + Path(stamp).stem + ".log"))
        params: fingerprint=hashlib.sha256(json.dumps([SETTINGS_SHA, LIBRARY_SHA, command]).encode()).hexdigest()
        threads: THREADS
        resources:
            runtime=PIPELINE["runtime_min"]["parser_unit" if trains else "default"], mem_mb=config.get("mem_mb", 8000),
            gpu=1 if trains and profile in PIPELINE["gpu_profiles"] else 0,
        shell: THREAD_ENV + " " + command + " > {log} 2>&1 && touch {output}"


for _stamp, (_command, _after, _trains) in PARSER_UNITS.items():
    _parser_unit_rule(_stamp, _command, _after, _trains)


def _ladder_rule(stamp, command, after):
    "One point of the compute ladder (its VQ-VAE, row and parsers) into the ledger."
    rule:
        name: "ladder_" + re.sub(r"\W+", "_", Path(stamp).stem)
        input: [str(JOBS[k].copy) if k in JOBS else k for k in after]
        output: stamp
        log: str(ROOT / "runs" / "logs" / "ladder" / (Path(stamp).stem + ".log"))
        params: fingerprint=hashlib.sha256(json.dumps([SETTINGS_SHA, LIBRARY_SHA, command]).encode()).hexdigest()
        threads: THREADS
        resources: runtime=PIPELINE["runtime_min"]["ladder_point"], mem_mb=16000, gpu=0
        shell: THREAD_ENV + " " + command + " > {log} 2>&1 && touch {output}"


for _stamp, (_command, _after) in LADDER_UNITS.items():
    _ladder_rule(_stamp, _command, _after)


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
