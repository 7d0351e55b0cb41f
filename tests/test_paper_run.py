"""The paper-compute command rehearsed on the CPU as a GPU machine runs it: the bundle `make device-bundle` builds (word
list exported here), a copy of the travelling tree, a Python with only torch, numpy and the carried packages, no data
folder; then benchmark, plan, training to the end of its schedule, vocabulary and record, within a wall-clock budget.
And the way back: the returned folder through `--record` into a ledger, and into every FACTORIZER notebook."""
import json, lzma, subprocess, sys

import pandas as pd

import pytest

from fixtures import ROOT, needs_data

PY = [sys.executable, "-m"]


@pytest.mark.slow
@needs_data
def test_paper_run_rehearsed_as_on_a_gpu_machine(tmp_path):
    from factorizer_nb.infra.device_bundle import out_problems, rehearse
    from factorizer_nb.factorizer.vocab import entries_from_text
    words, bundle, out = tmp_path / "words.tsv.xz", tmp_path / "bundle", tmp_path / "out"
    r = subprocess.run(PY + ["factorizer_nb.infra.paper_run", "--export-words", str(words)], capture_output=True,
                       text=True, timeout=300, cwd=ROOT)                          # what make paper-words runs
    assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run(PY + ["factorizer_nb.infra.device_bundle", "--out", str(bundle), "--words", str(words)],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)     # what make device-bundle runs
    assert r.returncode == 0 and "sum: " in r.stdout, r.stdout + r.stderr[-2000:]
    run = rehearse(bundle, out, "--profile", "tiny", "--budget", "70", "--reserve", "10", "--bench-steps", "1",
                   "--compile", "", "--device", "cpu", timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    rec = json.loads((out / "paper_run.json").read_text())
    assert rec["words"] > 100_000                                               # the paper profile's whole list
    assert rec["steps_done"] == rec["steps_planned"] >= 20 and rec["word_samples"] == rec["steps_done"] * rec["settings"]["vq_batch_size"]
    assert [b["path"] for b in rec["benchmark"]][0] == "reference" and all(b["error"] is None for b in rec["benchmark"])
    assert rec["flops"] > 0 and rec["device"].startswith("CPU") and "steps = min(" in rec["how_steps_were_chosen"]
    assert rec["packages"]["factorizer-nb"] is None and rec["packages"]["dawg2"] is None    # not installed there
    log = (out / "train_log.csv").read_text().splitlines()
    assert len(log) == rec["steps_done"] + 1 and float(log[-1].split(",")[-1]) <= 1.01 * rec["settings"]["vq_lr_final"]  # schedule ended
    items, meta = entries_from_text(lzma.decompress((out / rec["vocab_file"]).read_bytes()).decode())
    assert len(items) == rec["vocab_stats"]["vocab_size"] > 0 and meta["stats"] == rec["vocab_stats"]
    assert out_problems(out) == [] and sorted(p.name for p in out.iterdir()) == ["paper_run.json", "train_log.csv", rec["vocab_file"]]
    the_way_back(out, rec, tmp_path)


def the_way_back(out, rec, tmp_path):
    "The returned folder through `--record` (a temporary ledger), then Figure 3, Figure 4, the factorial and the ladder at `tiny`."
    from factorizer_nb.infra.reproduce import run_notebooks
    from factorizer_nb.infra.paper_run import returned_run
    from factorizer_nb.factorizer.vocab import Vocabulary
    from factorizer_nb.infra.reporting import _manifest_problems
    from factorizer_nb.core.settings import load_settings
    ledger, gpu = tmp_path / "ladder_work" / "ledger" / "ladder", tmp_path / "gpu"
    r = subprocess.run(PY + ["factorizer_nb.infra.paper_run", "--record", str(out), "--ledger", str(ledger), "--figures", str(gpu)],
                       capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    point = ledger / "paper-all"
    back = returned_run(point)
    assert back["steps_done"] == rec["steps_done"] and back["ledger_vocab"]["cut_to_words"] > 10_000
    bench = pd.read_csv(gpu / "paper_run_tiny.csv")                              # the benchmark, with its manifest
    assert list(bench.path) == [b["path"] for b in rec["benchmark"]] and (bench.device == rec["device"]).all()
    m = json.loads((gpu / "paper_run_tiny.manifest.json").read_text())
    assert m["measured_on"]["device"] == rec["device"] and f"{rec['steps_done']:,} steps" in m["caption"] and m["git"]["sha"]
    stale = _manifest_problems(m, lambda sha: True, load_settings)               # what make check-outputs asks of it, once committed
    assert [p for p in stale if "uncommitted changes" not in p] == [], stale
    vocab_size = None                                                           # the returned vocabulary's size, as the notebooks read it
    figs = tmp_path / "figures"
    runs = dict(fig3=("nbs/paper/13_fig3_splits.ipynb", {}), fig4=("nbs/paper/41_fig4_parser.ipynb", dict(families="FACTORIZER")),
                factorial=("nbs/paper/heavy/19_factorial.ipynb", dict(bpe_sizes="", vq_profile=None, workers=1, ledger=0)))
    for key, (nb, params) in runs.items():
        res = run_notebooks(["en"], "tiny", [ROOT / nb], runs_dir=tmp_path / "runs",
                            parameters=dict(work_dir=str(tmp_path / key), figures_dir=str(figs / key), vq_record=str(point), **params))
        assert all(v is None for v in res.values()), res
        assert sorted(p.name for p in (tmp_path / key / "returned").iterdir()) == ["paper-all.dawg"]
        vocab_size = vocab_size or len(Vocabulary.load(tmp_path / key / "returned" / "paper-all.dawg"))
    fig3 = pd.read_csv(figs / "fig3" / "fig3_splits_per_word_en.csv")
    assert (fig3[fig3.tokenizer == "FACTORIZER"].vocab_size == vocab_size).all() and fig3.subwords_per_word.ge(1).all()
    assert "returned without the checkpoint" in json.loads((figs / "fig3" / "fig3_splits_per_word_en.manifest.json").read_text())["caption"]
    q = pd.read_csv(figs / "fig3" / "table_quality_en.csv")
    assert q.word_samples.iloc[0] == back["steps_done"] * back["settings"]["vq_batch_size"] and q.vocab_size.iloc[0] == vocab_size
    fig4 = pd.read_csv(figs / "fig4" / "table_fig4_parser_en.csv")
    assert set(fig4.family) == {"FACTORIZER"} and len(fig4) == 2 and fig4.LAS.between(0, 100).all()
    assert "returned 'tiny'-profile" in json.loads((figs / "fig4" / "fig4_parser_en.manifest.json").read_text())["caption"]
    cells = pd.read_csv(figs / "factorial" / "table_factorial_en.csv")
    assert set(cells.segmentation) == {"FACTORIZER"} and len(cells) == 2
    assert "its checkpoint is not here" in json.loads((figs / "factorial" / "table_factorial_en.manifest.json").read_text())["caption"]
    res = run_notebooks(["en"], "tiny", [ROOT / "nbs/paper/heavy/20_vq_ladder.ipynb"], runs_dir=tmp_path / "runs",
                        parameters=dict(work_dir=str(tmp_path / "ladder_work"), figures_dir=str(figs / "ladder"), points="", word_lists="0",
                                        workers=1))
    assert all(v is None for v in res.values()), res
    ladder = pd.read_csv(figs / "ladder" / "table_vq_ladder_en.csv")
    assert list(ladder.point) == ["paper"] and ladder.flops.iloc[0] == back["flops"] and ladder.vocab_size.iloc[0] == vocab_size
    assert ladder.word_samples.iloc[0] == back["word_samples"] and ladder.list_entries.iloc[0] == back["words"]
    assert ladder.ratio_to_bpe_600.gt(0).all() and ladder.LAS.between(0, 100).all()
    assert (ledger / "paper-all.json").exists()                                 # the row, recorded beside the point
    for key in (*runs, "ladder_work"):                                          # no VQ-VAE trained or read here
        assert not list((tmp_path / key).rglob("vqvae")) and not list((tmp_path / key).rglob("vocab.dawg"))


def test_paper_run_refuses_a_bad_word_file(tmp_path):
    (tmp_path / "w.xz").write_bytes(b"plain text, not xz")
    r = subprocess.run(PY + ["factorizer_nb.infra.paper_run", "--words", str(tmp_path / "w.xz"), "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "not an xz-compressed word list" in r.stderr and not (tmp_path / "o").exists()
