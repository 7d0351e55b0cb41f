"""Tokenizer speed and vocabulary memory, with ratios to references measured in the same run (`make bench`; nothing here is a pass/fail threshold).

Speed: every whitespace word of UD en_ewt dev (24,787 words), encoded one after another, by tokenizers of 8,000 pieces
trained on the same top-50,000 wordfreq:en words. FACTORIZER uses the unigram stand-in vocabulary of
factorizer_nb.core.baselines plus every single byte: the search cost depends on the vocabulary's size and piece lengths,
not on where the scores came from. References: sentencepiece BPE's Python API (`encode` on the list of words, and
`encode` once per sentence, the way the README measured it before) and HF `tokenizers`' byte-level BPE `encode_batch`. BPE-dropout: the
project's seeded sampler (core.baselines.bpe_dropout) against sentencepiece's own sampling on the same model and words.

Memory: a vocabulary of random subwords whose file is about the size of the paper's English DAWG (about 129 MB),
loaded in a fresh process (numba's code loaded first); resident and peak memory above that baseline.

    python benchmarks/bench_encode.py [--vocab-size 8000] [--top-words 50000] [--repeats 3] [--memory-entries 1000000]
"""
import argparse, json, os, platform, random, subprocess, sys, tempfile, time
from factorizer_nb.core.data import BOW, EOW, load_settings, word_counts, ud_sentences, mark, marked_bytes
from factorizer_nb.core.baselines import SentencePieceTokenizer, unigram_standin_vocab, train_sentencepiece, train_hf_bpe
from factorizer_nb.core.fast_search import HAVE_NUMBA, split_many
from factorizer_nb.core.tokenizer import Factorizer
from factorizer_nb.core.vocab import Vocabulary, bytes_subword

CORES = os.cpu_count() or 1


def best_time(fn, repeats):
    "Fastest of `repeats` runs of fn(), in seconds (after one warm-up run)."
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter(); fn(); times.append(time.perf_counter() - t0)
    return min(times)


def byte_complete(vocab: Vocabulary) -> Vocabulary:
    "The vocabulary plus both marks and every single byte, as our trained vocabularies have (no word is [UNK])."
    extra = [(s, (255, 254 + k // 256, k % 256), -20.0) for k, s in enumerate([BOW, EOW] + [bytes_subword(bytes([b])) for b in range(256)]) if s not in vocab]
    return Vocabulary(list(vocab.items()) + extra)


def speed(a):
    S = load_settings("en")
    counts = word_counts(S["freq"], top_n=a.top_words)
    sents = [" ".join(s) for s in ud_sentences(S["ud_eval"])]
    words = [w for s in sents for w in s.split()]
    marked, raws = [mark(w) for w in words], [marked_bytes(w) for w in words]
    vocab = byte_complete(unigram_standin_vocab(counts, a.vocab_size))
    sp = train_sentencepiece(counts, a.vocab_size, "bpe")
    hf = train_hf_bpe(counts, a.vocab_size)
    fz = Factorizer(vocab, alpha_split=S["alpha_split"], cache_chars=0)
    ref = Factorizer(vocab, alpha_split=S["alpha_split"], cache_chars=0, compiled=False)
    warm = Factorizer(vocab, alpha_split=S["alpha_split"]); warm.encode_batch(words)
    sampler = Factorizer(vocab, alpha_split=S["alpha_split"], sigma_sample=S["sigma_sample"], seed=0)
    sigma, p_drop = S["sigma_sample"], S["bpe_dropout"]
    drop = SentencePieceTokenizer(sp, alpha=p_drop, seed=0)
    rows = [  # (what, cores, function)
        ("sentencepiece BPE, encode(list of words) (reference)", 1, lambda: sp.encode(marked, num_threads=1)),
        ("sentencepiece BPE, encode(list of words)", CORES, lambda: sp.encode(marked, num_threads=CORES)),
        ("sentencepiece BPE, encode() per sentence (the README's earlier reference)", 1, lambda: [sp.encode([mark(w) for w in s.split()]) for s in sents]),
        (f"sentencepiece BPE-dropout {p_drop:g} (its own, unseeded sampling), encode(list of words)", 1,
         lambda: sp.encode(marked, num_threads=1, enable_sampling=True, alpha=p_drop, nbest_size=-1)),
        (f"seeded BPE-dropout {p_drop:g} (ours, in sentencepiece's merge order), dropout_word per word", 1, lambda: [drop.dropout_word(m) for m in marked]),
        ("HF byte-level BPE, encode_batch(words)", CORES, lambda: hf.encode_batch(words)),
        ("HF byte-level BPE, encode_batch(sentences)", CORES, lambda: hf.encode_batch(sents)),
        ("FACTORIZER reference search (pure Python), every word", 1, lambda: [ref._split_word(w) for w in words]),
        ("FACTORIZER compiled search, every word (split_many)", 1, lambda: split_many(vocab.trie, raws, fz.alpha_split)),
        ("FACTORIZER compiled search, every word (split_many)", CORES, lambda: split_many(vocab.trie, raws, fz.alpha_split, num_threads=CORES)),
        ("FACTORIZER compiled, sampling σ=0.02, every word", 1, lambda: split_many(vocab.trie, raws, fz.alpha_split, sigma, seeds=range(len(raws)))),
        ("FACTORIZER compiled, sampling σ=0.02, every word", CORES, lambda: split_many(vocab.trie, raws, fz.alpha_split, sigma, seeds=range(len(raws)), num_threads=CORES)),
        ("FACTORIZER encode_ids_batch(words), no cache", 1, lambda: fz.encode_ids_batch(words)),
        ("FACTORIZER encode_ids_batch(words), no cache", CORES, lambda: fz.encode_ids_batch(words, num_workers=CORES)),
        ("FACTORIZER encode_ids_batch(words), sampling σ=0.02", 1, lambda: sampler.encode_ids_batch(words)),
        ("FACTORIZER encode_ids_batch(words), sampling σ=0.02", CORES, lambda: sampler.encode_ids_batch(words, num_workers=CORES)),
        ("FACTORIZER encode_batch(sentences) → Encodings, no cache", 1, lambda: fz.encode_batch(sents)),
        ("FACTORIZER encode_batch(sentences) → Encodings, no cache", CORES, lambda: fz.encode_batch(sents, num_workers=CORES)),
        ("FACTORIZER encode_batch(words) → Encodings, no cache", CORES, lambda: fz.encode_batch(words, num_workers=CORES)),
        ("FACTORIZER encode_batch(sentences) → Encodings, sampling σ=0.02", 1, lambda: sampler.encode_batch(sents)),
        ("FACTORIZER encode_batch(sentences) → Encodings, cache warm", 1, lambda: warm.encode_batch(sents)),
    ]
    measured = [(what, cores, len(words) / best_time(fn, a.repeats)) for what, cores, fn in rows]
    ref_wps = measured[0][2]
    print(f"en_ewt dev: {len(sents)} sentences, {len(words)} words; vocabularies of {a.vocab_size} pieces trained on the top "
          f"{a.top_words} wordfreq:en words; {platform.processor() or platform.machine()}, {CORES} cores, best of {a.repeats}; numba: {HAVE_NUMBA}")
    print(f"| what | cores | words/s | ratio to sentencepiece encode(list), 1 core |\n|---|---:|---:|---:|")
    for what, cores, wps in measured: print(f"| {what} | {cores} | {wps:,.0f} | {wps / ref_wps:.2f} |")


_MEMORY_CHILD = """
import json, sys
def rss():
    "Resident memory now and its peak since the last reset, in bytes."
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    return int(status["VmRSS"].split()[0]) * 1024, int(status["VmHWM"].split()[0]) * 1024
from factorizer_nb.core.tokenizer import Factorizer
from factorizer_nb.core.vocab import Vocabulary
small = Vocabulary([("a", (1, 2, 3), -1.0), ("⸥", (0, 0, 1), -1.0), ("⸤", (0, 0, 2), -1.0)])
Factorizer(small).encode_ids_batch(["a"]); Factorizer(small, compiled=False).encode_batch(["a"])   # numba's code is loaded first
open("/proc/self/clear_refs", "w").write("5")                   # reset the peak
base = rss()[0]
v = Vocabulary.load(sys.argv[1]); loaded = rss()
if sys.argv[2] == "compiled": t = v.trie; Factorizer(v).encode_ids_batch(["the tokenizer reads this sentence"]); extra = t.nbytes
else: extra = len(v.entries); Factorizer(v, compiled=False).encode_batch(["the tokenizer reads this sentence"])
now, peak = rss()
print(json.dumps(dict(loaded=loaded[0] - base, resident=now - base, peak=peak - base, trie_bytes=extra if sys.argv[2] == "compiled" else 0)))
"""


def memory(a):
    rng, alphabet = random.Random(0), "abcdefghijklmnopqrstuvwxyzéèüöß日本"
    subwords = {}
    while len(subwords) < a.memory_entries:
        subwords["".join(rng.choice(alphabet) for _ in range(rng.randint(2, 12)))] = None
    items = [(s, (rng.randrange(256), rng.randrange(256), rng.randrange(256)), -rng.uniform(0.01, 30)) for s in subwords]
    with tempfile.TemporaryDirectory() as tmp:
        path = byte_complete(Vocabulary(items)).save(os.path.join(tmp, "random.dawg"))
        size = os.path.getsize(path)
        del items, subwords
        print(f"\nrandom vocabulary: {a.memory_entries:,} subwords (+ bytes), file {size / 1e6:.0f} MB (the paper's English DAWG: about 129 MB)")
        print("| loading, then using | resident after loading | resident after the first encode | peak | of which trie arrays |\n|---|---:|---:|---:|---:|")
        for mode, what in [("compiled", "the compiled search (trie arrays)"), ("reference", "the reference search (the `entries` dict the class used to keep)")]:
            r = json.loads(subprocess.run([sys.executable, "-c", _MEMORY_CHILD, str(path), mode], capture_output=True, text=True, check=True).stdout)
            print(f"| {what} | {r['loaded'] / 2**20:,.0f} MiB | {r['resident'] / 2**20:,.0f} MiB | {r['peak'] / 2**20:,.0f} MiB | {r['trie_bytes'] / 2**20:,.0f} MiB |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--top-words", type=int, default=50000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--memory-entries", type=int, default=1_000_000)
    a = ap.parse_args()
    speed(a)
    if a.memory_entries: memory(a)


if __name__ == "__main__":
    main()
