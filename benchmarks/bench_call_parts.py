"""Where the time of one uncached `encode(word).ids` goes: the call taken apart on the pinned vocabularies, every whitespace
word of the language's UD evaluation text, as µs per word beside HF's byte-level BPE `encode(word).ids` timed in the same
run (nothing here is a pass/fail threshold). Each row is the best of 5 passes after one untimed pass.

Rows: the compiled kernel entered with no work (numba's unboxing of the `TextState`, bytes and row block, and boxing of
its two integers: an empty kernel of the same signature, given empty bytes); the kernel's search of each word (the one-text kernel itself,
no word table); `encode(word)` with no field read; `encode(word).ids`; and `.tokens`. What is left between the kernel and
`encode(word)` is Python around the call; what is left between `encode(word)` and `.ids` is the field read.

    python benchmarks/bench_call_parts.py [--pinned en zh]
"""
import argparse
from bench_split_commits import best          # the fastest of k runs, after one untimed run (this folder is on the path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pinned", nargs="+", default=["en", "zh"])
    ap.add_argument("--top-words", type=int, default=50000); ap.add_argument("--vocab-size", type=int, default=8000)
    a = ap.parse_args()
    import numba
    from factorizer_nb.factorizer import word_table as fs
    from factorizer_nb.factorizer.tokenizer import Factorizer
    from factorizer_nb.core.settings import load_settings
    from factorizer_nb.core.corpora import ud_sentences, word_counts
    from factorizer_nb.baselines.adapters import train_hf_bpe

    @numba.njit
    def empty(state, text, alpha, sigma, seed, specials, block): return 0, 0
    sig = (fs._TEXT_STATE, numba.types.Bytes(numba.uint8, 1, "C", readonly=True), numba.float64, numba.float64,
           numba.uint64, numba.boolean, numba.types.Array(numba.int32, 2, "C"))   # the one-text kernel's signature
    empty.compile(sig); empty_entry = empty.overloads[sig].entry_point

    for lang in a.pinned:
        S = load_settings(lang)
        words = [w for s in ud_sentences(S["ud_eval"]) for w in s]
        hf = train_hf_bpe(word_counts(S["freq"], top_n=a.top_words), a.vocab_size)
        fz = Factorizer.from_pretrained(lang, cache_chars=0)
        one = fz._text_encoder_of()
        raws = [w.encode("utf-8", "surrogatepass") for w in words]
        alpha, state, kernel = fz.alpha_split, one.state, one.kernel

        def searched():
            block = fs.new_row_block()
            for r in raws:
                if kernel(state, r, alpha, 0.0, 0, False, block)[0] == -2:
                    block = fs.new_row_block(); kernel(state, r, alpha, 0.0, 0, False, block)

        def each(call):
            "A loop over the words that keeps no result (a list of 24,787 encodings would time the garbage collector)."
            def run():
                for w in words: call(w)
            return run

        block = fs.new_row_block()
        rows = [("HF byte-level BPE `encode(word).ids` (reference)", each(lambda w: hf.encode(w).ids)),
                ("the kernel entered, no work", each(lambda w: empty_entry(state, b"", alpha, 0.0, 0, False, block))),
                ("the kernel's search (no word table)", searched),
                ("`encode(word)`, no field read", each(fz.encode)),
                ("`encode(word).ids`", each(lambda w: fz.encode(w).ids)),
                ("`encode(word).tokens`", each(lambda w: fz.encode(w).tokens))]
        times = [(name, best(fn, 5) / len(words) * 1e6) for name, fn in rows]
        ref = times[0][1]
        print(f"\n{lang}: {len(words):,} words, pinned vocabulary of {len(fz.vocab):,} subwords, no cache\n")
        print("| part | µs per word | HF's time / this |\n|---|---:|---:|")
        for name, us in times: print(f"| {name} | {us:.2f} | {ref / us:.2f} |")


if __name__ == "__main__": main()
