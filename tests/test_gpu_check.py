"""`make gpu-check`'s command on the CPU with the tiny profile: the four parts run and write a table with its manifest
(slow tier: `nbs/infra/96_gpu_check` runs the same functions in process in `make test`)."""
import json, subprocess, sys
import pytest

import pandas as pd

from fixtures import needs_data


@pytest.mark.slow
@needs_data
def test_gpu_check_command_runs_on_the_cpu(tmp_path):
    r = subprocess.run([sys.executable, "-m", "factorizer_nb.infra.gpu_check", "--profile", "tiny", "--device", "cpu", "--vq-steps", "2",
                        "--lm-steps", "1", "--micro-batch", "2", "--vq-padded-steps", "2", "--triplets", "2048", "--batch-size", "512", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    df = pd.read_csv(tmp_path / "gpu_check_tiny.csv")
    assert list(df.part) == ["VQ-VAE training", "VQ-VAE training, one padded chunk", "LM pretraining (FACTORIZER)", "vocabulary inference"]
    assert (df.per_second > 0).all()
    m = json.loads((tmp_path / "gpu_check_tiny.manifest.json").read_text())
    assert m["settings"]["profile"] == "tiny" and "GPU check" in m["caption"]


@pytest.mark.slow
@needs_data
def test_gpu_check_measures_on_one_machine_and_records_on_another(tmp_path):
    "--raw measures only (a GPU machine without this checkout's history); --record writes the table and manifest from that file."
    raw, out = tmp_path / "m.json", tmp_path / "figures"
    cmd = [sys.executable, "-m", "factorizer_nb.infra.gpu_check"]
    r = subprocess.run(cmd + ["--profile", "tiny", "--device", "cpu", "--vq-steps", "2", "--lm-steps", "1", "--micro-batch", "2",
                              "--triplets", "1024", "--batch-size", "512", "--raw", str(raw), "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert raw.exists() and not out.exists()                           # measured, nothing recorded yet
    r = subprocess.run(cmd + ["--record", str(raw), "--out", str(out), "--name", "gpu_check_elsewhere"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    m = json.loads((out / "gpu_check_elsewhere.manifest.json").read_text())
    assert m["measured_on"]["device"].startswith("CPU") and m["measured_on"]["torch"] and len(pd.read_csv(out / "gpu_check_elsewhere.csv")) == 4
    raw.write_text('{"rows": [')                                      # a file cut off mid-write: a clear error, no output
    r = subprocess.run(cmd + ["--record", str(raw), "--out", str(tmp_path / "bad")], capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "cut off or not JSON" in r.stderr and not (tmp_path / "bad" / "gpu_check_tiny.csv").exists()
