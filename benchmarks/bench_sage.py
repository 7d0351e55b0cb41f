"""SaGe: our implementation against the authors' public `sage-tokenizer` 2.0, one after the other on the same machine.

Same corpus (gensim's bundled English Wikipedia sample, as `text_lines("gensim:enwiki")` reads it), same initial
vocabulary (sentencepiece BPE as UTF-8 bytes plus all 256 single bytes: 6,000 tokens), final size 4,000, k = 100,
embeddings retrained every 4 rounds, the same number of worker processes. Reports wall time and peak memory (the
summed RSS of the whole process tree, sampled every 0.1 s), the objective of each final vocabulary under our
objective, and the overlap of the final vocabularies.

sage-tokenizer pins gensim 4.3.2 and scipy 1.12, so it is installed in its own virtualenv (created on first use),
never in the project's environment. Every run of it gets a clean directory (it caches tokenized corpora by size).

    python benchmarks/bench_sage.py                    # everything, 2 repeats
    python benchmarks/bench_sage.py --skip-theirs      # ours only

At the paper's sizes (`--scale paper`: 20,000 -> 16,000, Table 6, on the sage_paper profile's English Wikipedia text, 879,080
words) ours runs the paper's Algorithm 3 in full (wall time and peak memory) and the first `--rounds` rounds of the public
implementation's schedule and loss (every token rescored each round, embeddings every 4 rounds); sage-tokenizer runs its whole
schedule, stopped after `--their-seconds` if it has not finished, and the ratio is per pruning round.

    python benchmarks/bench_sage.py --scale paper --runs 1 --rounds 4 --their-seconds 1800
"""
from __future__ import annotations
import argparse, json, os, re, shutil, subprocess, sys, threading, time
from pathlib import Path
import numpy as np
import pandas as pd
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from factorizer_nb.core.corpora import text_lines                                     # noqa: E402
from factorizer_nb.sage.corpus import Corpus, Segmentation, initial_vocabulary        # noqa: E402
from factorizer_nb.sage.pruning import SaGe                                           # noqa: E402
from factorizer_nb.sage.skipgram import PairScores, skipgram_tables, train_skipgram   # noqa: E402
from factorizer_nb.sage.tokenizer import read_vocabulary                              # noqa: E402
from factorizer_nb.sage.checkpoints import run_sage                                   # noqa: E402

INITIAL, FINAL, K, EVERY = 6000, 4000, 100, 4         # the small scale; --scale paper: 20,000 -> 16,000 (Table 6)

# our configurations: name -> (unit, SaGe keyword arguments)
OURS = {
    # the public implementation's schedule and loss: every round rescores every token, ±2 window, one table
    "compat": ("byte", dict(M=10**9, m=1, l=EVERY, window=2, shared_vectors=True)),
    # the same, continuing the previous Word2Vec model for one epoch at each retraining instead of starting over
    "compat-warm": ("byte", dict(M=10**9, m=1, l=EVERY, window=2, shared_vectors=True, w2v_warm_start=True,
                                 w2v_retrain_epochs=1)),
    # the paper's Algorithm 3 with Table 6's M, m, l and ±5 window, two tables, on characters
    "paper": ("char", dict(M=1500, m=10, l=4, window=5)),
}


def measure(cmd: list[str], cwd: Path, env=None, timeout: float | None = None) -> dict:
    "Run a command; wall seconds, the peak summed RSS of its process tree, and whether it was stopped at `timeout` seconds."
    peak, stop = [0], threading.Event()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=open(cwd / "stdout.log", "w"), stderr=open(cwd / "stderr.log", "w"))
    proc = psutil.Process(p.pid)

    def sample():
        while not stop.is_set():
            try:
                rss = proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(recursive=True))
                peak[0] = max(peak[0], rss)
            except psutil.Error:
                pass
            stop.wait(0.1)
    th = threading.Thread(target=sample, daemon=True); th.start()
    try: rc, timed_out = p.wait(timeout=timeout), False
    except subprocess.TimeoutExpired:
        for c in proc.children(recursive=True) + [proc]:
            try: c.kill()
            except psutil.Error: pass
        rc, timed_out = p.wait(), True
    stop.set(); th.join()
    if rc and not timed_out: raise RuntimeError(f"{cmd[:3]} failed with exit code {rc}; see {cwd}/stderr.log")
    return dict(seconds=time.perf_counter() - t0, peak_mb=peak[0] / 2**20, timed_out=timed_out)


def their_venv(path: Path) -> Path:
    "A virtualenv with sage-tokenizer 2.0.0, created on first use."
    py = path / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "sage-tokenizer==2.0.0"], check=True)
    return py


THEIR_SCRIPT = """
from sage_tokenizer.SaGeVocabBuilder import SaGeVocabBuilder
b = SaGeVocabBuilder(full_vocab_schedule=list(range({initial}, {final} - 1, -{k})),
                     embeddings_schedule=list(range({initial}, {final}, -{k} * {every})), max_len=16,
                     workers_number={workers}, word2vec_d=50, word2vec_n=15, word2vec_window_size=5)
b.build_vocab("bench", "corpus.txt", "initial.hex", partial_corpus_line_number=1000)
"""


def run_ours(name: str, work: Path, workers: int, final: int):
    "Child process: one of our configurations down to `final` tokens (so that its memory is measured alone)."
    unit, kw = OURS[name]
    lines = (work.parent / "corpus.txt").read_text(encoding="utf-8").splitlines()
    pieces = read_vocabulary(work.parent / f"initial_{unit}.txt", unit)
    run_sage(SaGe(Corpus.from_lines(lines, unit), pieces, final, k=K, w2v_workers=workers, seed=0, **kw), work, progress=False)


def objective(lines, pieces, unit, window, shared_vectors, seed=12345) -> dict:
    "A vocabulary scored under our objective: fresh skip-gram tables (one thread, fixed seed) on its tokenization."
    seg = Segmentation(Corpus.from_lines(lines, unit), pieces)
    model = train_skipgram(seg.sentences(), seed=seed, workers=1)
    ll = seg.sentence_ll(PairScores(*skipgram_tables(model, len(pieces), shared_vectors)), window).sum()
    return dict(objective=float(ll), tokens=int(len(seg.flat)), per_token=float(ll / len(seg.flat)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "bench_sage")
    ap.add_argument("--their-venv", type=Path, default=ROOT / ".bench-venv-sage")
    ap.add_argument("--skip-theirs", action="store_true")
    ap.add_argument("--ours", nargs="*", default=list(OURS))
    ap.add_argument("--scale", choices=["small", "paper"], default="small")
    ap.add_argument("--rounds", type=int, default=4, help="--scale paper: rounds of the public schedule our compat configuration runs")
    ap.add_argument("--their-seconds", type=float, default=2 * 3600, help="--scale paper: stop sage-tokenizer after this long")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--final", type=int, default=FINAL, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return run_ours(a.child, Path.cwd(), a.workers, a.final)
    if a.scale == "paper": return paper_scale(a)

    a.out.mkdir(parents=True, exist_ok=True)
    lines = list(text_lines("gensim:enwiki"))
    (a.out / "corpus.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    init_bytes = initial_vocabulary(lines, INITIAL, unit="byte")
    init_chars = initial_vocabulary(lines, INITIAL, unit="char")
    (a.out / "initial_byte.txt").write_text("".join(p.hex() + "\n" for p in init_bytes))
    (a.out / "initial_char.txt").write_text("".join(p + "\n" for p in init_chars), encoding="utf-8")
    print(f"corpus: {len(lines)} lines, {sum(len(l.split()) for l in lines)} words; initial vocabulary "
          f"{len(init_bytes)} byte tokens / {len(init_chars)} character pieces; final {FINAL}; k={K}; "
          f"embeddings every {EVERY} rounds; {a.workers} workers", flush=True)

    results, finals = [], {}
    for r in range(a.runs):
        for name in a.ours:
            d = a.out / f"ours_{name}_{r}"
            shutil.rmtree(d, ignore_errors=True); d.mkdir()
            env = dict(os.environ, PYTHONPATH=str(ROOT))
            m = measure([sys.executable, str(Path(__file__).resolve()), "--child", name, "--workers", str(a.workers), "--final", str(FINAL)], d, env)
            unit = OURS[name][0]
            finals[f"ours_{name}_{r}"] = (unit, read_vocabulary(d / "vocab.txt", unit))
            w2v = float(pd.read_csv(d / "steps.tsv", sep="\t").embed_seconds.sum())
            results.append(dict(impl=f"ours ({name})", key=f"ours_{name}_{r}", run=r, **m, w2v_seconds=w2v))
            print(results[-1], flush=True)

        if not a.skip_theirs:
            py = their_venv(a.their_venv)
            d = a.out / f"theirs_{r}"
            shutil.rmtree(d, ignore_errors=True); d.mkdir()
            shutil.copy(a.out / "corpus.txt", d / "corpus.txt"); shutil.copy(a.out / "initial_byte.txt", d / "initial.hex")
            (d / "run.py").write_text(THEIR_SCRIPT.format(initial=INITIAL, final=FINAL, k=K, every=EVERY, workers=a.workers))
            m = measure([str(py), "run.py"], d)
            finals[f"theirs_{r}"] = ("byte", read_vocabulary(d / "results" / "bench" / "sage_vocabs" / f"active_vocab_{FINAL}.vocab", "byte"))
            log_text = "".join(f.read_text() for f in (d / "logs").glob("*.log"))
            w2v = sum(float(x) for x in re.findall(r"Embeddings time:([0-9.]+)", log_text))
            results.append(dict(impl="sage-tokenizer 2.0", key=f"theirs_{r}", run=r, **m, w2v_seconds=w2v))
            print(results[-1], flush=True)
    # quality: every final vocabulary of byte tokens under our ±2 / shared-table objective, character ones under ±5
    for key, (unit, pieces) in finals.items():
        if key.endswith("_0"):
            window, shared = (2, True) if unit == "byte" else (5, False)
            score = objective(lines, pieces, unit, window, shared)
            for row in results:
                if row["key"] == key: row.update(score, size=len(pieces), objective_window=window)
    ref = [r["seconds"] for r in results if r["impl"].startswith("sage")]
    ref_rest = [r["seconds"] - r["w2v_seconds"] for r in results if r["impl"].startswith("sage")]
    for row in results:
        row["without_w2v_seconds"] = row["seconds"] - row["w2v_seconds"]
        if ref:
            row["speedup_vs_theirs_mean"] = float(np.mean(ref) / row["seconds"])
            row["speedup_without_w2v"] = float(np.mean(ref_rest) / row["without_w2v_seconds"])
    b0 = finals.get("theirs_0")
    for key, (unit, pieces) in finals.items():
        if b0 and unit == "byte" and key != "theirs_0":
            print(f"overlap {key} vs theirs_0: {len(set(pieces) & set(b0[1]))} of {FINAL}")
    if "ours_compat_1" in finals and "ours_compat_0" in finals:
        print(f"overlap ours_compat_1 vs ours_compat_0: {len(set(finals['ours_compat_1'][1]) & set(finals['ours_compat_0'][1]))} of {FINAL}")
    (a.out / "results.json").write_text(json.dumps(results, indent=1))
    print(pd.DataFrame(results).to_string(index=False, float_format=lambda v: f"{v:.4g}"))


def paper_scale(a):
    "Table 6's sizes: our full Algorithm 3 run (wall time, peak memory), then the first `a.rounds` rounds of the public schedule by both."
    from factorizer_nb.core.settings import load_settings
    S = load_settings("en", "sage_paper")
    initial, final = S["sage_initial_vocab"], S["sage_final_vocab"]
    out = a.out.with_name(a.out.name + "_paper"); out.mkdir(parents=True, exist_ok=True)
    lines = [l for src in S[S["sage_text"]].split() for l in text_lines(src)]
    (out / "corpus.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for unit in ("byte", "char"):
        init = initial_vocabulary(lines, initial, unit=unit)
        (out / f"initial_{unit}.txt").write_text("".join((p.hex() if unit == "byte" else p) + "\n" for p in init), encoding="utf-8")
    words = sum(len(l.split()) for l in lines)
    print(f"corpus: {len(lines):,} lines, {words:,} words ({S[S['sage_text']]}); {initial:,} -> {final:,}, k={K}; {a.workers} workers", flush=True)
    env, me = dict(os.environ, PYTHONPATH=str(ROOT)), str(Path(__file__).resolve())
    rows, cut = [], initial - a.rounds * K
    for r in range(a.runs):
        d = out / f"ours_paper_full_{r}"; shutil.rmtree(d, ignore_errors=True); d.mkdir()
        rows.append(dict(impl="ours (paper: Algorithm 3, M=1,500, m=10, l=4, ±5)", rounds=(initial - final) // K, run=r,
                         **measure([sys.executable, me, "--child", "paper", "--workers", str(a.workers), "--final", str(final)], d, env)))
        print(rows[-1], flush=True)
        d = out / f"ours_compat_{r}"; shutil.rmtree(d, ignore_errors=True); d.mkdir()
        rows.append(dict(impl="ours (compat: the public schedule and loss)", rounds=a.rounds, run=r,
                         **measure([sys.executable, me, "--child", "compat", "--workers", str(a.workers), "--final", str(cut)], d, env)))
        print(rows[-1], flush=True)
        if not a.skip_theirs:        # the whole schedule (it skips targets above the vocabulary its 1,000-line sample uses), stopped at the cap
            py = their_venv(a.their_venv)
            d = out / f"theirs_{r}"; shutil.rmtree(d, ignore_errors=True); d.mkdir()
            shutil.copy(out / "corpus.txt", d / "corpus.txt"); shutil.copy(out / "initial_byte.txt", d / "initial.hex")
            (d / "run.py").write_text(THEIR_SCRIPT.format(initial=initial, final=final, k=K, every=EVERY, workers=a.workers))
            m = measure([str(py), "run.py"], d, timeout=a.their_seconds)
            done = len(list((d / "results" / "bench" / "sage_vocabs").glob("active_vocab_*.vocab")))      # one file per pruning round
            rows.append(dict(impl="sage-tokenizer 2.0 (whole schedule" + (f", stopped at {a.their_seconds:.0f} s)" if m["timed_out"] else ")"),
                             rounds=done, run=r, **m))
            print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    df["seconds_per_round"] = df.seconds / df.rounds.clip(lower=1)
    theirs = df[df.impl.str.startswith("sage-tokenizer")].seconds_per_round.mean() if not a.skip_theirs else np.nan
    df["speedup_vs_theirs_per_round"] = theirs / df.seconds_per_round
    (out / "results.json").write_text(df.to_json(orient="records", indent=1))
    print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))


if __name__ == "__main__":
    main()
