"""The paper-compute command end to end on the CPU at the tiny profile: the word list exported here,
then benchmark, plan, training to the end of its schedule, vocabulary and record, within a wall-clock budget."""
import json, lzma, os, subprocess, sys

import pytest

from fixtures import needs_data

CMD = [sys.executable, "-m", "factorizer_nb.infra.paper_run"]
# one thread: beside another test worker on 2 cores, two threads each run the tiny steps 10-20 times slower
ENV = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")


@pytest.mark.slow
@needs_data
def test_paper_run_command_on_the_cpu(tmp_path):
    words, out = tmp_path / "words.tsv.xz", tmp_path / "out"
    r = subprocess.run(CMD + ["--profile", "tiny", "--export-words", str(words), "--top-words", "2000"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert len(lzma.decompress(words.read_bytes()).decode().splitlines()) == 2000
    r = subprocess.run(CMD + ["--profile", "tiny", "--words", str(words), "--out", str(out), "--budget", "30", "--reserve", "8",
                              "--bench-steps", "1", "--compile", "", "--device", "cpu"], capture_output=True, text=True, timeout=600,
                       env=ENV)
    assert r.returncode == 0, r.stderr[-2000:]
    rec = json.loads((out / "paper_run.json").read_text())
    assert rec["steps_done"] == rec["steps_planned"] >= 20 and rec["word_samples"] == rec["steps_done"] * rec["settings"]["vq_batch_size"]
    assert [b["path"] for b in rec["benchmark"]][0] == "reference" and all(b["error"] is None for b in rec["benchmark"])
    assert rec["flops"] > 0 and rec["device"].startswith("CPU") and "steps = min(" in rec["how_steps_were_chosen"]
    log = (out / "vqvae" / "train_log.csv").read_text().splitlines()
    assert len(log) == rec["steps_done"] + 1 and float(log[-1].split(",")[-1]) <= 1.01 * rec["settings"]["vq_lr_final"]  # schedule ended
    assert lzma.decompress((out / "vocab.tsv.xz").read_bytes()).decode().startswith("{")


def test_paper_run_refuses_a_bad_word_file(tmp_path):
    (tmp_path / "w.xz").write_bytes(b"plain text, not xz")
    r = subprocess.run(CMD + ["--words", str(tmp_path / "w.xz"), "--out", str(tmp_path / "o")], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "not an xz-compressed word list" in r.stderr and not (tmp_path / "o").exists()
