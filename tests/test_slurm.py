"""The pipeline on a real Slurm: a single-node cluster from Debian's slurm-wlm and munge (tests/slurm/start_slurm.sh), the
tiny batch submitted through snakemake-executor-plugin-slurm, and its outputs compared with the local executor's."""
import os, shutil, subprocess, sys
from pathlib import Path
import pytest
from fixtures import copy_checkout
from test_workflow import ROOT, SNAKEMAKE, ran

SLURM = ROOT / "tests" / "slurm"


@pytest.fixture
def slurm(tmp_path):
    "A running single-node Slurm; the environment that reaches it."
    if not shutil.which("slurmctld") or not shutil.which("munged"):
        if os.environ.get("CI"): pytest.fail("Slurm is missing: .ci/run installs slurm-wlm and munge")
        pytest.skip("no Slurm here (apt-get install slurm-wlm munge)")
    where = tmp_path / "slurm"
    r = subprocess.run([str(SLURM / "start_slurm.sh"), str(where)], capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-3000:]
    env = dict(os.environ)
    env.update(line.removeprefix("export ").split("=", 1) for line in r.stdout.splitlines() if line.startswith("export "))
    try: yield env
    finally: subprocess.run([str(SLURM / "stop_slurm.sh"), str(where)], capture_output=True, timeout=120)


@pytest.mark.slow
def test_tiny_batch_on_slurm_equals_local(tmp_path, slurm, data_dir_env):
    local, cluster = copy_checkout(tmp_path / "local"), copy_checkout(tmp_path / "cluster")
    config = ["--config", "batch=tiny", "langs=en"]
    run = lambda where, *a, env=None: subprocess.run(SNAKEMAKE + ["--directory", str(where), *a, *config], cwd=where,
                                                     env=env, capture_output=True, text=True, timeout=1800)
    r = run(local, "--cores", "2")
    assert r.returncode == 0, r.stderr[-3000:]
    r = run(cluster, "--workflow-profile", str(cluster / "workflow" / "profiles" / "slurm"), "--jobs", "2",
            "--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "5", "--slurm-keep-successful-logs",
            "--default-resources", f"slurm_partition={slurm['SLURM_TEST_PARTITION']}", "runtime=30", "mem_mb=4000", env=slurm)
    assert r.returncode == 0, r.stderr[-5000:]
    jobs = {"nb_tiny_en_11_train_vqvae", "nb_tiny_en_12_vocab_inference", "nb_tiny_en_13_fig3_splits"}
    assert jobs <= ran(r)
    # each job ran as a Slurm job: submitted with a job id, its log under .snakemake/slurm_logs/rule_<name>/<job id>.log
    assert all(f"rule_{j}/" in r.stderr + r.stdout for j in jobs) and "submitted with SLURM jobid" in r.stderr + r.stdout
    logs = {p.parent.name.removeprefix("rule_") for p in (cluster / ".snakemake" / "slurm_logs").glob("rule_*/*.log")}
    assert jobs <= logs, logs
    # the same tables and figures, byte for byte (their manifests differ only in times and places)
    made = sorted(p.relative_to(local) for p in (local / "figures" / "tiny").rglob("*")
                  if p.is_file() and not p.name.endswith((".manifest.json", ".pdf")))
    assert made
    differ = [str(p) for p in made if (local / p).read_bytes() != (cluster / p).read_bytes()]
    assert not differ, differ
    # and the cluster's run is up to date for the local executor too: nothing reruns
    assert ran(run(cluster, "--cores", "2", "--dry-run")) == set()
