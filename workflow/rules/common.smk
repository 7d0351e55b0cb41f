# The pipeline's jobs, planned from config/pipeline.yaml: a job per paper notebook x language x profile (x parameters),
# the heavy units as jobs of their own, and where each committed figure and table comes from.
import functools, hashlib, json, re, shlex, subprocess, sys
from dataclasses import dataclass, field
from pathlib import Path
import yaml
from factorizer_nb.infra.reproduce import (committed_seconds, copy_label, declared_parameters, missing_requirements,
                                           parameter_defaults)

ROOT = Path(workflow.basedir).parent
PIPELINE = yaml.safe_load((ROOT / "config" / "pipeline.yaml").read_text(encoding="utf-8"))
PAPER = ROOT / "nbs" / "paper"
KNOWN_NOTEBOOKS = {p.stem: p for p in sorted(PAPER.glob("**/[0-9]*.ipynb"))}
SUMMARIES = {p.stem for p in PAPER.glob("summary/*.ipynb")}
from factorizer_nb.core.pins import PIN_MODES
from factorizer_nb.core.threads import thread_env
THREADS = int(config.get("threads", 2))
PYTHON = sys.executable                 # the environment that runs Snakemake runs every job, on a cluster too


def stop(message):
    "End the run before any job with `message` on one line (an unknown language, profile, notebook or batch)."
    sys.stderr.write(f"pipeline: {message}\n")
    raise SystemExit(2)


def settings_sections():
    "The languages and profiles settings.ini defines."
    from factorizer_nb.core.settings import read_settings
    sections = read_settings(ROOT / "settings.ini").sections()
    profiles = [s.removeprefix("profile:") for s in sections if s.startswith("profile:")] + ["paper"]
    return [s for s in sections if ":" not in s and s != "DEFAULT"], profiles


LANGUAGES, PROFILES = settings_sections()


@functools.lru_cache(maxsize=None)
def sha256(*paths):
    "One sha256 over the contents of `paths` (files, or every file under a folder), by relative name."
    h = hashlib.sha256()
    for p in paths:
        p = Path(p)
        for f in sorted(p.rglob("*")) if p.is_dir() else [p] if p.exists() else []:
            if f.is_file() and "__pycache__" not in f.parts:
                h.update(f.relative_to(ROOT).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


LIBRARY_SHA = sha256(*(p for p in (ROOT / "factorizer_nb").rglob("*.py") if p.name != "_modidx.py"))
SETTINGS_SHA = sha256(ROOT / "settings.ini")


def run_folder(lang, profile, pins):
    "A job's executed copy's folder: runs/<lang> or runs/<lang>-<profile>; under runs/pinned/ when drawn from the pins."
    return ROOT / "runs" / ("pinned" if pins == "use" else "") / (lang if profile == "small" else f"{lang}-{profile}")


def shown(value):
    "A parameter's value as an executed copy's name shows it (`text/en_gutenberg8.txt.xz`: `en_gutenberg8`)."
    return copy_label({"v": value}).removeprefix("-v_")


@dataclass
class Job:
    "One notebook for one language and profile (`lang` is `summary` for a cross-language notebook)."
    nb: str
    lang: str
    profile: str
    pins: str = "off"
    parameters: dict = field(default_factory=dict)
    summary_langs: list = field(default_factory=list)
    after: list = field(default_factory=list)       # the keys of the jobs it follows, and files it waits for
    outputs: list = field(default_factory=list)     # committed figures and tables it rewrites
    claims: bool = True                              # False: it writes only new outputs (a returned GPU run's figures)

    @property
    def key(self): return f"{self.profile}/{self.lang}/{self.nb}{copy_label(self.parameters)}"
    @property
    def rule(self): return "nb_" + re.sub(r"\W", "_", self.key)
    @property
    def copy(self):
        return run_folder(self.lang, self.profile, self.pins) / f"{self.nb}{copy_label(self.parameters)}.ipynb"
    @property
    def notebook(self): return KNOWN_NOTEBOOKS[self.nb]

    def fingerprint(self):
        """What the job's result depends on, by content: notebook, settings, library, parameters, and the pins it draws
        from (with pins=use; otherwise the ledger is what the job writes, not what it reads)."""
        pins = sha256(ROOT / "data" / "ledger" / f"{self.lang}-{self.profile}" / "pins") if self.pins == "use" else ""
        return hashlib.sha256(json.dumps([sha256(self.notebook), SETTINGS_SHA, LIBRARY_SHA, pins, self.pins,
                                          self.parameters, self.summary_langs]).encode()).hexdigest()

    def command(self):
        p = " ".join(f"-p {shlex.quote(f'{k}={v}')}" for k, v in sorted(self.parameters.items()))
        if self.lang == "summary":
            return (f"{PYTHON} -m factorizer_nb.infra.reproduce --only-summaries "
                    f"--summaries {self.notebook.relative_to(ROOT)} "
                    + (f"--langs {' '.join(self.summary_langs)} " if self.summary_langs else "")
                    + f"--profile {self.profile} --pins {self.pins}")
        return (f"{PYTHON} -m factorizer_nb.infra.reproduce --langs {self.lang} --profile {self.profile} "
                f"--notebooks {self.notebook.relative_to(ROOT)} --pins {self.pins} {p}").strip()


def expand(value, what):
    "A batch's `$langs`, `$pinned_langs`, `$profile` or `$ledger` from the config, lists as lists."
    if isinstance(value, str) and value.startswith("$"):
        name = value[1:]
        if name == "ledger": return int(keeps_ledger(config.get("profile", "small")))
        value = config.get(name, [])
    if what == "langs" and isinstance(value, str): value = value.split()
    return value


def keeps_ledger(profile):
    "Whether the language models of `profile` are recorded in data/ledger/ (small and tiny train in their notebooks)."
    return profile not in ("small", "tiny")


def check(langs=(), profile=None, notebooks=()):
    "Stop on a language, profile or notebook settings.ini and nbs/paper/ do not know."
    if bad := [l for l in langs if l not in LANGUAGES]:
        stop(f"unknown language {', '.join(bad)}; known: {' '.join(LANGUAGES)}")
    if profile is not None and profile not in PROFILES:
        stop(f"unknown profile {profile}; known: {' '.join(PROFILES)}")
    if bad := [n for n in notebooks if n not in KNOWN_NOTEBOOKS]:
        stop(f"unknown notebook {', '.join(bad)}; known: {' '.join(KNOWN_NOTEBOOKS)}")


@functools.lru_cache(maxsize=None)
def settings_of(lang, profile):
    from factorizer_nb.core.settings import load_settings
    return load_settings(lang, profile)


def requirements_met(nb, lang, profile):
    "Whether settings.ini has what the notebook needs for this language (its `requires-` tags)."
    return not missing_requirements(KNOWN_NOTEBOOKS[nb], settings_of(lang, profile))


def plan(batch_name):
    """The jobs of a batch: {key: Job}; the heavy units; stamps ({file: (language, the executed copies it marks
    finished)}, a run's `stamp`, which a notebook that runs a set of others reads as done); whether it ends with the
    report."""
    batches = PIPELINE["batches"]
    if batch_name not in batches: stop(f"unknown batch {batch_name}; known: {' '.join(batches)}")
    jobs, heavy, stamps, report = {}, [], {}, False
    for run in batches[batch_name]:
        if run.get("report"): report = True; continue
        langs, profiles = expand(run.get("langs", []), "langs"), expand(run.get("profile", "small"), "profile")
        profiles = profiles if isinstance(profiles, list) else [profiles]
        pins = run.get("pins", "off")
        if pins not in PIN_MODES: stop(f"batch {batch_name}: pins {pins}; known: {' '.join(PIN_MODES)}")
        check(langs)
        for profile in profiles: check(profile=profile)
        here = dict(lang=lambda v: v in expand("$langs", "langs"), profile=lambda v: v == expand("$profile", ""))
        if not all(here[k](v) for k, v in (run.get("only_if") or {}).items()): continue
        if {"paper_vq", "gpu_check", "lm_models", "evaluate"} & set(run):
            heavy.append({k: expand(v, k) for k, v in run.items()}); continue
        wanted = run.get("notebooks", [])
        wanted = sorted(n for n, p in KNOWN_NOTEBOOKS.items() if p.parent == PAPER) if wanted == "paper" else wanted
        check(notebooks=wanted)
        given = {**run.get("parameters", {}), **config.get("parameters", {})}
        parameters = {k: expand(v, "") for k, v in given.items()}
        lm_units = [h for h in heavy if "lm_models" in h and keeps_ledger(h["profile"])]
        lm_units = lm_units if run.get("after_lm_models") else []
        for lang in langs:
            for profile in profiles:
                here = str(run_folder(lang, profile, pins))
                given = {k: v.replace("$run_dir", here).replace("$root", str(ROOT)) if isinstance(v, str) else v
                         for k, v in parameters.items()}
                for nb in wanted:
                    if not requirements_met(nb, lang, profile): continue
                    j = Job(nb, lang, profile, pins, {k: v for k, v in given.items() if k in _declared(nb)})
                    j.after = [Job(u, lang, profile, pins).key for u in PIPELINE["after"].get(nb, [])
                               if Job(u, lang, profile, pins).key in jobs]
                    j.after += [f for h in lm_units for m in h["lm_models"] for f in lm_stamps(m, profile)]
                    j.after += [f for f, (l, _) in stamps.items() if l == lang] if run.get("after_stamps") else []
                    j.after += [str(ROOT / f) for f in run.get("after_files", [])]
                    j.claims = run.get("claims", True)
                    j.after += ladder_after(j)                      # a ladder VQ-VAE it reads, trained by its own job
                    if parameter(j, "ledger") and pins == "off" and nb in parser_notebooks():
                        j.after += parser_units(j)                  # its parsers as jobs of their own, then it reads them
                    if nb == "20_vq_ladder" and pins == "off" and parameter(j, "ledger"):
                        j.after += ladder_units(j)                  # each point a job of its own, then it reads them
                    jobs[j.key] = j
                if run.get("stamp"):
                    stamps[str(Path(here) / run["stamp"])] = (lang, [str(j.copy) for j in jobs.values()
                                                                     if (j.lang, j.profile) == (lang, profile)])
        summaries = run.get("summaries")
        if summaries:
            names = sorted(SUMMARIES) if summaries == "all" else summaries
            check(notebooks=names)
            for profile in profiles:
                for nb in names:
                    # over the languages named, else each summary's own list (every language with outputs)
                    s = Job(nb, "summary", profile, pins, summary_langs=run.get("summary_langs") or [])
                    s.after = [k for k, j in jobs.items() if j.profile == profile and j.lang != "summary"]
                    jobs[s.key] = s
    return jobs, heavy, stamps, report


@functools.lru_cache(maxsize=None)
def _declared(nb):
    "The parameters a notebook's `parameters` cell declares (factorizer_nb.infra.reproduce.declared_parameters)."
    return declared_parameters(KNOWN_NOTEBOOKS[nb])


def committed_outputs():
    "{(producer, lang, profile): [manifest stems]} of every committed manifest under figures/."
    tracked = subprocess.run(["git", "ls-files", "figures"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    out = {}
    for name in (n for n in tracked if n.endswith(".manifest.json")):
        m = json.loads((ROOT / name).read_text(encoding="utf-8"))
        s = m.get("settings") if isinstance(m.get("settings"), dict) else {}
        stem = name.removesuffix(".manifest.json")
        nb = Path((m.get("notebook") or {}).get("path") or "").stem or next(
            (p for prefix, p in PIPELINE["producers"].items() if Path(stem).name.startswith(prefix)), None)
        lang = "summary" if nb in SUMMARIES else s.get("lang")
        files = [f for f in tracked if f.startswith(stem + ".") and f[len(stem):].count("/") == 0]
        out.setdefault((nb, lang, s.get("profile")), []).append((stem, files))
    return out


COMMITTED = committed_outputs()


def claim_outputs(jobs):
    "Give each job the committed files its notebook writes; a notebook run with parameters claims the names they show."
    groups = {}
    for j in jobs.values():
        if j.claims: groups.setdefault((j.nb, j.lang, j.profile), []).append(j)
    for key, js in groups.items():
        for stem, files in COMMITTED.get(key, []):
            named = [j for j in js if j.parameters and any(shown(v) in Path(stem).name for v in j.parameters.values())]
            owner = named[0] if named else next((j for j in js if not j.parameters), js[0] if len(js) == 1 else None)
            if owner: owner.outputs += files


def parser_notebooks():
    "The notebooks whose parsers are jobs of their own (imported only where a batch may have them: torch loads slowly)."
    from factorizer_nb.downstream.parser_units import PARSER_NOTEBOOKS
    return PARSER_NOTEBOOKS


def parameter(j, name):
    "A job's parameter: as the batch gives it, else the notebook's default."
    return j.parameters[name] if name in j.parameters else _defaults(j.nb).get(name)


@functools.lru_cache(maxsize=None)
def _defaults(nb):
    "The values a notebook's `parameters` cell assigns (literals only)."
    return parameter_defaults(KNOWN_NOTEBOOKS[nb])


LADDER_UNITS = {}       # {stamp: (command, what it follows)}: the compute ladder's points as jobs of their own


def ladder_stamp(lang, name):
    return str(ROOT / "runs" / "workflow" / "ladder" / f"{lang}-{name}.done")


def ladder_units(j):
    """A job per point of the compute ladder that notebook job `j` (20_vq_ladder) draws (downstream.ladder_points: the
    VQ-VAE, its row and its parsers, recorded in the ledger), and the grid's BPE parsers it compares them with."""
    from factorizer_nb.downstream.ladder_points import point_name
    parsers = bool(parameter(j, "parsers"))
    leave_out = str(parameter(j, "leave_out") or "").split()
    command = (f"{PYTHON} -m factorizer_nb.downstream.ladder_points --lang {j.lang} --profile {j.profile}"
               + (" --parsers" if parsers else ""))
    stamps = []
    for top_words in (int(v) for v in str(parameter(j, "word_lists")).split()):
        for point in str(parameter(j, "points")).split():
            if (name := point_name(point, top_words)) in leave_out: continue
            check(profile=point)
            stamps.append(ladder_stamp(j.lang, name))
            LADDER_UNITS.setdefault(stamps[-1], (command + f" --point {name}", list(j.after)))
    bpe = Job("41_fig4_parser", j.lang, j.profile, j.pins, {"families": "BPE"}, after=list(j.after))
    return stamps + (parser_units(bpe) if parsers else [])


def ladder_after(j):
    "The ladder job of the VQ-VAE that job `j` reads (its `vq_profile` and `vq_words`), where the batch has one."
    profile = parameter(j, "vq_profile") if "vq_profile" in _declared(j.nb) else None
    if not profile or j.pins != "off": return []
    words = parameter(j, "vq_words")
    words = int(settings_of(j.lang, profile)["vq_top_words"]) if words in (None, "") else int(words)
    from factorizer_nb.downstream.ladder_points import point_name
    stamp = ladder_stamp(j.lang, point_name(profile, words))
    return [stamp] if stamp in LADDER_UNITS else []


PARSER_UNITS = {}       # {stamp: (command, what it follows, whether it trains a parser)}: the parsers as jobs of their own


def parser_units(j):
    """A job per tokenizer point and seed of a parser notebook's job `j` (downstream.parser_units, recorded in the
    ledger), after one job that builds the points' tokenizers: their stamps. A run that another notebook of the same
    language, profile and vocabulary also trains (Figure 6's points are Figure 4's) is one job."""
    from factorizer_nb.downstream.parser_units import FAMILIES, point_keys
    S = settings_of(j.lang, j.profile)
    families = [f.strip() for f in str(parameter(j, "families") or ",".join(FAMILIES)).split(",") if f.strip()]
    sizes = [int(v) for v in str(parameter(j, "bpe_sizes") or "").split()] if j.nb == "19_factorial" else []
    vq = {k: parameter(j, k) for k in ("vq_profile", "vq_words", "vq_record") if parameter(j, k) not in (None, "")}
    if "vq_record" in vq: vq = {"vq_record": vq["vq_record"]}           # a returned run: no ladder VQ-VAE
    folder = ROOT / "runs" / "workflow" / "parsers" / f"{j.lang}-{j.profile}{copy_label(vq)}"
    command = (f"{PYTHON} -m factorizer_nb.downstream.parser_units --notebook {j.nb} --lang {j.lang} "
               f"--profile {j.profile} --families {shlex.quote(','.join(families))}"
               + (f" --bpe-sizes {shlex.quote(' '.join(map(str, sizes)))}" if sizes else "")
               + "".join(f" --{k.replace('_', '-')} {shlex.quote(str(v))}" for k, v in vq.items()))
    build = str(folder / f"{j.nb}.points.done")
    earlier = [k for k, (c, _, unit) in PARSER_UNITS.items() if not unit and Path(k).parent == folder]
    PARSER_UNITS[build] = (command + " --build", list(j.after) + earlier[-1:], False)   # j.after: the ladder's VQ-VAE too   # one build at a time per folder
    stamps = []
    for key in point_keys(j.nb, S, families, sizes):
        for seed in (int(S["seed"]) + k for k in range(int(S["ud_seeds"]))):
            stamp = str(folder / f"{key}.seed{seed}.done")
            PARSER_UNITS.setdefault(stamp, (command + f" --point {key} --seed {seed}", [build], True))
            stamps.append(stamp)
    return stamps


def lm_stamp(model, profile, part):
    "The file that marks one part of a language model of `profile` finished (`lm_command --parts`)."
    name = re.sub(r"\W+", "_", model).strip("_").lower()
    return str(ROOT / "runs" / "workflow" / f"lm-{profile}" / f"{name}.{part}.done")


def lm_stamps(model, profile):
    "The stamps of everything the notebooks ask of a language model: its pretraining and each part after it."
    from factorizer_nb.downstream.lm_experiments import model_parts
    return [lm_stamp(model, profile, p) for p in ("pretraining", *model_parts(model))]


COMMITTED_SECONDS = committed_seconds(ROOT)     # how long each notebook ran in the committed run


def resources_of(j):
    "Runtime (minutes), memory (MB) and GPUs a job asks of a cluster."
    lang = "en" if j.lang == "summary" else j.lang                   # a summary's manifests name English
    took = COMMITTED_SECONDS.get((j.notebook.relative_to(ROOT).as_posix(), lang, j.profile))
    minutes = max(20, 3 * took // 60) if took else PIPELINE["runtime_min"].get(j.nb, PIPELINE["runtime_min"]["default"])
    return dict(runtime=int(minutes), mem_mb=PIPELINE["mem_mb"].get(j.nb, config.get("mem_mb", 8000)),
                gpu=1 if j.profile in PIPELINE["gpu_profiles"] else 0)


# every job runs with the same threads (the pins depend on them), whose waits spin briefly, then sleep (core.threads)
THREAD_ENV = " ".join(f"{k}={v}" for k, v in thread_env(THREADS).items())
