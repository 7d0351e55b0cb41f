"""The pipeline (workflow/Snakefile): every batch's DAG builds, every paper notebook and every committed output has a job
that makes it, bad names get one line, and (slow) a tiny batch is up to date by content: a second run runs nothing, a
touched file reruns nothing, an edited notebook reruns it and what reads it, and a killed job is run again."""
import os, re, shutil, signal, subprocess, sys, time
from collections import Counter
from pathlib import Path
import pytest, yaml
from fixtures import copy_checkout

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "--snakefile", "workflow/Snakefile"]     # the checkout's in cwd
BATCHES = yaml.safe_load((ROOT / "config" / "pipeline.yaml").read_text(encoding="utf-8"))["batches"]
# the settings each batch was run with for the committed outputs, where the defaults (English, small) do not fit
CONFIG = {"lm": [["profile=cpu"], ["profile=small"]], "lm-gates": [["profile=cpu"]], "lm-sweep": [["profile=cpu"]],
          "gpu-check": [["profile=paper"]], "figures": [["pinned_langs=en ar zh cs no gd tr ja"]],
          "evaluate": [["tokenizer=cl100k_base"]], "seed-spread": [["langs=en gd"]]}


def snakemake(*args, cwd=ROOT, check=True, timeout=120):
    "Run Snakemake in `cwd`; its completed process."
    r = subprocess.run(SNAKEMAKE + ["--directory", str(cwd), *args], cwd=cwd, capture_output=True, text=True,
                       timeout=timeout)
    if check and r.returncode: raise AssertionError(f"snakemake {' '.join(args)} failed:\n{r.stderr[-3000:]}")
    return r


def planned(batch, *config, cwd=ROOT):
    "{output file: rule} of every job a batch's DAG holds (Snakemake's --summary)."
    out = snakemake("--summary", "--nolock", "--config", f"batch={batch}", *config, cwd=cwd).stdout
    rows = [line.split("\t") for line in out.splitlines()[1:] if "\t" in line]
    twice = [f for f, n in Counter(r[0] for r in rows).items() if n > 1]
    assert not twice, f"batch {batch}: files two jobs make: {sorted(twice)[:5]}"     # one job owns each output
    return {Path(r[0]).resolve(): r[2] for r in rows}


def every_job():
    "The union of every batch's outputs, and how long the slowest DAG took to build."
    outputs, slowest = {}, 0.0
    for batch in BATCHES:
        for config in CONFIG.get(batch, [[]]):
            t0 = time.perf_counter()
            outputs.update(planned(batch, *config))
            slowest = max(slowest, time.perf_counter() - t0)
    return outputs, slowest


def test_every_batch_builds_and_every_output_has_a_job():
    """Every batch's DAG builds; every paper notebook and every committed output has a job that makes it (one test, so
    that the DAGs are built once, not once per test worker)."""
    outputs, slowest = every_job()
    assert outputs
    print(f"slowest DAG: {slowest:.1f} s")          # its budget, 10 s, is kept in docs/timings.md, not asserted
    copies = {p.name.split("-")[0].removesuffix(".ipynb") for p in outputs if p.suffix == ".ipynb"}
    if any(rule.startswith("evaluate_") for rule in outputs.values()):
        copies.add("60_your_tokenizer")                 # make evaluate runs it (factorizer_nb.eval.evaluate)
    notebooks = {p.stem for p in (ROOT / "nbs" / "paper").glob("**/[0-9]*.ipynb")}
    assert not notebooks - copies, f"no job runs {sorted(notebooks - copies)}"
    tracked = subprocess.run(["git", "ls-files", "figures"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    stems = {t.removesuffix(".manifest.json") for t in tracked if t.endswith(".manifest.json")}
    made = [t for t in tracked if any(t.startswith(s + ".") and "/" not in t[len(s):] for s in stems)]
    assert made
    orphans = sorted(t for t in made if (ROOT / t).resolve() not in outputs)
    assert not orphans, f"{len(orphans)} committed outputs no job makes, e.g. {orphans[:5]}"


def test_notebooks_follow_what_they_read():
    "Per language: 12 after 11, 13-16 after 12, the parsers after their tokenizers, the summaries after the languages."
    import re
    dot = snakemake("--dry-run", "--nolock", "--config", "batch=reproduce", "langs=en gd", "--forceall", "--dag").stdout
    labels = dict(re.findall(r'^\s*(\d+)\[label = "([^"]+)"', dot, re.M))
    named = {(labels[a], labels[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", dot, re.M)}
    for lang in ("en", "gd"):
        for before, after in [("11_train_vqvae", "12_vocab_inference"), ("12_vocab_inference", "13_fig3_splits"),
                              ("12_vocab_inference", "16_fig2_graph"), ("21_sage", "41_fig4_parser"),
                              ("41_fig4_parser", "48_intrinsic")]:
            pair = (f"nb_small_{lang}_{before}", f"nb_small_{lang}_{after}")
            assert pair in named, f"{pair[1]} does not follow {pair[0]}"
        assert (f"nb_small_{lang}_48_intrinsic", "nb_small_summary_48_intrinsic_languages") in named
    assert ("nb_small_en_11_train_vqvae", "nb_small_gd_12_vocab_inference") not in named   # languages stay apart


def dag_edges(batch, *config):
    "{(rule before, rule after)} of a batch's whole DAG (every job, done or not)."
    import re
    dot = snakemake("--dry-run", "--nolock", "--config", f"batch={batch}", *config, "--forceall", "--dag").stdout
    labels = dict(re.findall(r'^\s*(\d+)\[label = "([^"]+)"', dot, re.M))
    return {(labels[a], labels[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", dot, re.M)}


def test_heavy_units_are_jobs():
    "Every parser seed, ladder point, LM pretraining and fine-tuning is a job, and what reads it comes after it."
    from factorizer_nb.core.settings import load_settings
    from factorizer_nb.downstream.lm.finetune import LM_MODELS
    from factorizer_nb.downstream.lm_experiments import model_parts
    from factorizer_nb.downstream.parser_units import point_keys
    edges = dag_edges("parser-grid")
    S = load_settings("en", "grid")
    seeds = [int(S["seed"]) + k for k in range(int(S["ud_seeds"]))]
    for nb in ("41_fig4_parser", "42_fig6_noise", "43_parser_ablation"):
        for key in point_keys(nb, S):
            for seed in seeds:
                unit = "parser_en_grid_" + re.sub(r"\W+", "_", f"{key}.seed{seed}.done")
                assert ("parser_en_grid_41_fig4_parser_points_done" in {a for a, b in edges if b == unit}
                        or nb != "41_fig4_parser"), f"{unit} is not built after the points"
                assert (unit, f"nb_grid_en_{nb}_ledger_1") in edges, f"{nb} does not follow {unit}"
    edges = dag_edges("ladder")
    for name in ("tiny_50000", "small_all", "medium_50000", "large_all"):
        assert (f"ladder_en_{name}", "nb_grid_en_20_vq_ladder") in edges, name
    assert ("parser_en_grid_bpe_4000_seed42_done", "nb_grid_en_20_vq_ladder") in edges     # BPE's side of the ladder
    edges = dag_edges("compute-study")                  # what reads a ladder VQ-VAE waits for its job
    assert ("ladder_en_medium_50000", "parser_en_plateau_vq_profile_medium_19_factorial_points_done") in edges
    assert ("ladder_en_medium_all", "parser_en_plateau_vq_profile_medium_vq_words_0_41_fig4_parser_points_done") in edges
    assert ("parser_en_plateau_vq_profile_medium_bpe_factorized_triplets_4096_seed42_done", "nb_plateau_en_19_factorial") in edges
    edges = dag_edges("lm", "profile=cpu")
    for model in LM_MODELS:
        name = re.sub(r"\W+", "_", f"cpu_{model}").strip("_").lower()
        assert ("lm_cpu_tokenizers", f"lm_{name}_pretraining") in edges, model
        for part in model_parts(model):
            assert (f"lm_{name}_pretraining", f"lm_{name}_{part}") in edges, (model, part)
            assert (f"lm_{name}_{part}", "nb_cpu_en_45_lm_tables_ledger_1") in edges, (model, part)
    assert ("lm_cpu_bpe_finetune", "lm_cpu_bpe_noise") in edges                  # the noise scores the fine-tuned parsers


@pytest.mark.parametrize("config,known", [("langs=en xx", "known: en ar"), ("profile=huge", "known: small grid"),
                                          ("batch=nope", "known: reproduce figures")])
def test_unknown_names_get_one_line(config, known):
    r = snakemake("--dry-run", "--nolock", "--quiet", "--config", config, check=False)
    line = [l for l in r.stderr.splitlines() if l.startswith("pipeline:")]
    assert r.returncode != 0 and len(line) == 1 and known in line[0], r.stderr[-2000:]


def test_unknown_notebook_gets_one_line():
    r = subprocess.run([sys.executable, "-m", "factorizer_nb.infra.reproduce", "--notebooks", "99_none"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "known: 00_tokenizer_demo" in r.stderr, r.stderr


def ran(result) -> set[str]:
    "The rules in the job table a Snakemake run or dry run prints (`Job stats:`), but `all`; empty when it has none."
    lines = (result.stdout + "\n" + result.stderr).splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("job ") and "count" in l), None)
    if start is None: return set()
    rules = []
    for line in lines[start + 2:]:                      # after the header and its rule of dashes, up to `total`
        if not line.strip() or line.startswith("total"): break
        rules.append(line.split()[0])
    return set(rules) - {"all"}


@pytest.mark.slow
def test_tiny_batch_is_up_to_date_by_content(tmp_path, data_dir_env):
    "The tiny batch runs; then nothing reruns, a touch reruns nothing, an edit reruns what follows, a killed job reruns."
    work = copy_checkout(tmp_path / "clone")
    run = lambda *a, **k: snakemake("--cores", "2", *a, "--config", "batch=tiny", "langs=en", cwd=work,
                                    timeout=1200, **k)
    first = run()
    assert {"nb_tiny_en_11_train_vqvae", "nb_tiny_en_12_vocab_inference", "nb_tiny_en_13_fig3_splits"} <= ran(first)
    assert ran(run("--dry-run")) == set()                                        # up to date: no job
    for p in (work / "nbs" / "paper").glob("*.ipynb"): os.utime(p)     # newer than every output, same content
    assert ran(run("--dry-run")) == set()
    nb = work / "nbs" / "paper" / "12_vocab_inference.ipynb"
    nb.write_text(nb.read_text(encoding="utf-8").replace('"# ', '"# Edited: ', 1), encoding="utf-8")
    assert ran(run("--dry-run")) == {"nb_tiny_en_12_vocab_inference", "nb_tiny_en_13_fig3_splits"}
    # killed mid-run (SIGKILL, Snakemake and all): the job is not marked complete, and the next run runs it again
    nb = work / "nbs" / "paper" / "11_train_vqvae.ipynb"
    nb.write_text(nb.read_text(encoding="utf-8").replace('"# ', '"# Edited: ', 1), encoding="utf-8")
    log = work / "runs" / "logs" / "tiny_en_11_train_vqvae.log"
    log.unlink(missing_ok=True)
    p = subprocess.Popen(SNAKEMAKE + ["--directory", str(work), "--cores", "2", "--config", "batch=tiny", "langs=en"],
                         cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 120
    while not log.exists() and time.time() < deadline: time.sleep(0.5)
    time.sleep(3)
    assert p.poll() is None, "the VQ-VAE's job ended before it could be killed"
    os.killpg(p.pid, signal.SIGKILL); p.wait()
    assert "nb_tiny_en_11_train_vqvae" in ran(run("--dry-run", "--nolock"))
    # the Makefile's way in clears the lock the killed run left, and runs the unfinished job again, to the end
    again = subprocess.run(["workflow/run.sh", sys.executable, "-m", "snakemake", "--snakefile", "workflow/Snakefile",
                            "--cores", "2", "--config", "batch=tiny", "langs=en"], cwd=work, capture_output=True, text=True,
                           timeout=1200)
    assert again.returncode == 0, again.stderr[-3000:]
    assert {"nb_tiny_en_11_train_vqvae", "nb_tiny_en_12_vocab_inference"} <= ran(again)
    assert ran(run("--dry-run")) == set()


@pytest.mark.slow
def test_parsers_are_jobs_read_back(tmp_path, data_dir_env):
    "Figure 4's tiny parsers run as a job per point and seed into the ledger; the notebook then trains none of them."
    from factorizer_nb.core.settings import load_settings
    from factorizer_nb.downstream.parser_units import point_keys
    work = copy_checkout(tmp_path / "clone")
    run = lambda *a: snakemake("--cores", "2", *a, "--config", "batch=tiny-parsers", "langs=en", cwd=work, timeout=1500)
    S = load_settings("en", "tiny")
    seed, keys = int(S["seed"]), point_keys("41_fig4_parser", S)
    first = run()
    assert {"parser_en_tiny_" + re.sub(r"\W+", "_", f"{k}.seed{seed}.done") for k in keys} <= ran(first)
    ledger = work / "data" / "ledger" / "en-tiny"
    assert all((ledger / k / f"seed{seed}.json").is_file() for k in keys), sorted(ledger.glob("*/*"))
    fig4 = work / "runs" / "en-tiny" / "ud" / "fig4"
    shutil.rmtree(fig4)                                                          # the parsers' weights and logs lost
    again = run("--forcerun", "nb_tiny_en_41_fig4_parser_ledger_1")
    assert ran(again) == {"nb_tiny_en_41_fig4_parser_ledger_1"}                 # no unit reran: their records stand
    assert not list(fig4.rglob("*.pt")), "the notebook trained a parser the ledger records"
    assert ran(run("--dry-run")) == set()
