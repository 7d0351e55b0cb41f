"""Encode throughput of the FACTORIZER tokenizer (uncached and cached) beside sentencepiece BPE, in one run.

Both tokenizers are trained on the same word-frequency list and encode the same en_ewt dev sentences.
The FACTORIZER side uses the unigram stand-in vocabulary (factorizer_nb.core.baselines) until a VQ-VAE vocabulary
exists; the search cost depends on the vocabulary's size and piece lengths, not on where the scores came from.
Prints words/s and ratios; nothing here is a pass/fail threshold.

    python benchmarks/bench_encode.py [--vocab-size 8000] [--top-words 50000] [--repeats 3]
"""
import argparse, platform, time
from factorizer_nb.core.data import load_settings, word_counts, ud_sentences, mark
from factorizer_nb.core.baselines import unigram_standin_vocab, train_sentencepiece
from factorizer_nb.core.tokenizer import Factorizer


def best_time(fn, repeats):
    "Fastest of `repeats` runs of fn(), in seconds."
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter(); fn(); times.append(time.perf_counter() - t0)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--top-words", type=int, default=50000)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    S = load_settings("en")
    counts = word_counts(S["freq"], top_n=a.top_words)
    sents = [" ".join(s) for s in ud_sentences(S["ud_eval"])]
    n_words = sum(len(s.split()) for s in sents)
    vocab = unigram_standin_vocab(counts, a.vocab_size)
    sp = train_sentencepiece(counts, a.vocab_size, "bpe")

    def factorizer_uncached():
        fz = Factorizer(vocab, alpha_split=S["alpha_split"], cache_chars=0)
        for s in sents: fz.encode(s)

    warm = Factorizer(vocab, alpha_split=S["alpha_split"])
    for s in sents: warm.encode(s)
    def factorizer_cached():
        for s in sents: warm.encode(s)

    sampler = Factorizer(vocab, alpha_split=S["alpha_split"], sigma_sample=S["sigma_sample"], seed=0)
    def factorizer_sampling():
        for s in sents: sampler.encode(s)

    def spm_bpe():
        for s in sents: sp.encode([mark(w) for w in s.split()])

    rows = [(name, n_words / best_time(fn, a.repeats)) for name, fn in
            [("sentencepiece BPE (reference)", spm_bpe), ("factorizer, uncached", factorizer_uncached),
             ("factorizer, cached", factorizer_cached), ("factorizer, sampling sigma=0.02", factorizer_sampling)]]
    ref = rows[0][1]
    print(f"en_ewt dev: {len(sents)} sentences, {n_words} words; vocabularies of {a.vocab_size} pieces "
          f"trained on the top {a.top_words} wordfreq:en words; {platform.processor() or platform.machine()}, best of {a.repeats}")
    print(f"{'tokenizer':34} {'words/s':>12} {'ratio to spm BPE':>18}")
    for name, wps in rows: print(f"{name:34} {wps:12,.0f} {wps / ref:18.3f}")


if __name__ == "__main__":
    main()
