"""The paper-compute command rehearsed on the CPU as a GPU machine runs it: the bundle `make device-bundle` builds (word
list exported here), a copy of the travelling tree, a Python with only torch, numpy and the carried packages, no data
folder; then benchmark, plan, training to the end of its schedule, vocabulary and record, within a wall-clock budget."""
import json, lzma, subprocess, sys

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
    run = rehearse(bundle, out, "--profile", "tiny", "--budget", "40", "--reserve", "10", "--bench-steps", "1",
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


def test_paper_run_refuses_a_bad_word_file(tmp_path):
    (tmp_path / "w.xz").write_bytes(b"plain text, not xz")
    r = subprocess.run(PY + ["factorizer_nb.infra.paper_run", "--words", str(tmp_path / "w.xz"), "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "not an xz-compressed word list" in r.stderr and not (tmp_path / "o").exists()
