"""A grid of from-scratch parsers trained one at a time on every thread against `workers` at a time, each on its share of the threads,
as a ratio of wall time measured in the same run (`run_grid(workers=)`; the heavy notebooks 19_factorial and 20_vq_ladder use 2 workers).

    python benchmarks/bench_grid_workers.py [--sentences 1500] [--dev 200] [--epochs 1] [--seeds 2] [--workers 2]
"""
import argparse, tempfile, time
from dataclasses import replace
from pathlib import Path
import torch
from factorizer_nb.downstream.experiments import ParserExperiment, run_grid
from factorizer_nb.downstream.tokenizer_points import bpe_point


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=1500); ap.add_argument("--dev", type=int, default=200)
    ap.add_argument("--epochs", type=int, default=1); ap.add_argument("--seeds", type=int, default=2); ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    exp = ParserExperiment.setup("en", "plateau", device="cpu")
    with tempfile.TemporaryDirectory() as d:
        point = bpe_point(exp.counts(), 4000, Path(d) / "tok")
        kw = dict(config=exp.config, training=replace(exp.training, epochs=a.epochs), progress=False)
        times = {}
        for workers in (1, a.workers):
            t0 = time.perf_counter()
            run_grid([point], exp.train[:a.sentences], exp.dev[:a.dev], Path(d) / f"w{workers}", list(range(a.seeds)), workers=workers, **kw)
            times[workers] = time.perf_counter() - t0
    print(f"{a.seeds} parsers (BPE-4000, {a.sentences} training sentences, {a.epochs} epoch(s), dev {a.dev}), torch threads {torch.get_num_threads()}")
    for w, t in times.items(): print(f"workers={w}: {t:6.1f} s  speed-up {times[1] / t:.2f}x")


if __name__ == "__main__":
    main()
