"""Language-model runs one after the other on every thread against two side by side on a share of the threads each, as ratios measured
in the same run, at the `cpu` profile's shapes with fewer steps, sentences and paragraphs: two pretrainings (`pretrain`, in this process
against `pretrain(threads=)` in two processes at once; wall time, and steps/s after each run's start-up, which a long run amortizes), and
two fine-tuning seeds (`LMExperiment.finetune` with `workers` 1 and 2, the `lm_workers` setting).

    python benchmarks/bench_lm_workers.py [--steps 300] [--sentences 3000] [--paragraphs 20000]
"""
import argparse, os, tempfile, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import pandas as pd
import torch
from factorizer_nb.core.settings import find_settings
from factorizer_nb.downstream.lm.data import packed_rows, LMText
from factorizer_nb.downstream.lm.training import LOG
from factorizer_nb.downstream.lm.cli import pretrain
from factorizer_nb.downstream.lm_experiments import LMExperiment

PROFILE = "bench_lm_workers"        # written into a copy of settings.ini: the cpu profile with the benchmark's sizes
SIDE_BY_SIDE = 2


def bench_settings(path: Path, steps: int, paragraphs: int) -> Path:
    "A copy of settings.ini with a profile that extends `cpu`: `steps` pretraining steps, `paragraphs` of text, one fine-tuning epoch, 2 seeds."
    (path.parent / "data").symlink_to(find_settings().parent / "data")       # the project root is where settings.ini is: its data registry
    extra = (f"\n[profile:{PROFILE}]\nextends = cpu\nlm_steps = {steps}\nlm_checkpoint_every = {steps}\nlm_max_paragraphs = {paragraphs}\n"
             "ft_epochs = 1\nlm_seeds = 2\n")
    path.write_text(find_settings().read_text(encoding="utf-8") + extra, encoding="utf-8")
    return path


def steady_steps_per_second(path: Path, skip: int = 20) -> float:
    "Optimizer steps per second of one pretraining run after its first `skip` steps (from its log): the rate without start-up."
    log = pd.read_csv(path.parent / LOG)
    log = log[log.step > skip]
    return (len(log) - 1) / (log.seconds.iloc[-1] - log.seconds.iloc[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300); ap.add_argument("--sentences", type=int, default=3000)
    ap.add_argument("--paragraphs", type=int, default=20000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        os.environ["FACTORIZER_NB_SETTINGS"] = str(bench_settings(Path(d) / "settings.ini", a.steps, a.paragraphs))   # read by the children too
        times = {}
        for workers in (1, SIDE_BY_SIDE):
            exp = LMExperiment.setup("en", PROFILE, work_dir=Path(d) / f"w{workers}", device="cpu", workers=workers)
            exp.train = exp.train[:a.sentences]
            specs = exp.specs(["BPE", "Unigram LM"])
            texts = LMText.from_settings(exp.S).corpus()[0]
            for sp in specs: packed_rows(sp.tokenizer, texts, int(exp.S["lm_seq_len"]), cache_dir=exp.lm_dir / "cache")   # packed before the clock
            t0 = time.perf_counter()
            if workers == 1: paths = [exp.pretrain(sp) for sp in specs]
            else:
                threads = max(1, torch.get_num_threads() // workers)
                with ThreadPoolExecutor(workers) as pool:                     # threads that wait on the pretraining processes
                    paths = list(pool.map(lambda sp: pretrain(sp, exp.pretrain_setup, exp.run_dir(sp) / "pretrain", device="cpu", cache=exp.lm_dir / "cache",
                                                              threads=threads), specs))
            t1 = time.perf_counter()
            exp.finetune(specs[0], progress=False)
            rates = [steady_steps_per_second(p) for p in paths]
            steady = sum(rates) if workers > 1 else 1 / (sum(1 / r for r in rates) / len(rates))   # side by side the rates add up
            times[workers] = (t1 - t0, steady, time.perf_counter() - t1)
    print(f"cpu profile shapes: 2 models (BPE, Unigram LM) x {a.steps} pretraining steps; 2 fine-tuning seeds x 1 epoch of {a.sentences} "
          f"en_ewt sentences; torch threads {torch.get_num_threads()}")
    for w, (pre, steady, ft) in times.items():
        print(f"{w} at a time: pretraining {pre:6.1f} s (speed-up {times[1][0] / pre:.2f}x; after start-up {steady:.2f} steps/s, "
              f"{steady / times[1][1]:.2f}x), fine-tuning {ft:6.1f} s (speed-up {times[1][2] / ft:.2f}x)")


if __name__ == "__main__":
    main()
