"`make gpu-check`'s command on the CPU with the tiny profile: the three parts run and write a table with its manifest."""
import json, subprocess, sys

import pandas as pd

from fixtures import needs_data


@needs_data
def test_gpu_check_command_runs_on_the_cpu(tmp_path):
    r = subprocess.run([sys.executable, "-m", "factorizer_nb.infra.gpu_check", "--profile", "tiny", "--device", "cpu", "--vq-steps", "2",
                        "--lm-steps", "1", "--micro-batch", "2", "--triplets", "2048", "--batch-size", "512", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    df = pd.read_csv(tmp_path / "gpu_check_tiny.csv")
    assert list(df.part) == ["VQ-VAE training", "LM pretraining (FACTORIZER)", "vocabulary inference"] and (df.per_second > 0).all()
    m = json.loads((tmp_path / "gpu_check_tiny.manifest.json").read_text())
    assert m["settings"]["profile"] == "tiny" and "GPU check" in m["caption"]
