"""A pinned FACTORIZER tokenizer pickled, and hashed as `datasets` hashes a function's closure on every `map`: the bytes and
the time, beside the same tokenizer pickled with its derived search arrays (what pickles held before they were left out),
timed in the same run. Each time is the median of 7 runs. Prints ratios, asserts nothing.

    python benchmarks/bench_pickle.py [--pinned en zh]
"""
import argparse, pickle, statistics, time


def median_time(fn, k: int = 7) -> float:
    "The median of `k` timed calls of `fn`, after one untimed call."
    fn(); ts = []
    for _ in range(k):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)


class WithArrays:
    "The tokenizer as pickles held it before: the vocabulary's state, its search arrays, and the tokenizer's settings."
    def __init__(self, fz):
        self.vocab, self.trie = fz.vocab.__getstate__(), fz.vocab.trie
        self.tokenizer = {k: v for k, v in fz.__getstate__().items() if k != "vocab"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pinned", nargs="+", default=["en", "zh"])
    a = ap.parse_args()
    from datasets.fingerprint import Hasher
    from factorizer_nb.factorizer.tokenizer import Factorizer

    for lang in a.pinned:
        fz = Factorizer.from_pretrained(lang); fz.encode("warm up")
        now, before = pickle.dumps(fz), pickle.dumps(WithArrays(fz))
        t_now, t_before = median_time(lambda: Hasher.hash(fz)), median_time(lambda: Hasher.hash(WithArrays(fz)))
        back = median_time(lambda: pickle.loads(now).encode("the first call after unpickling"), k=3)
        print(f"{lang}: pickle {len(now) / 1e6:.2f} MB against {len(before) / 1e6:.2f} MB with the arrays "
              f"({len(now) / len(before):.2f}x); datasets' hash {t_now * 1e3:.1f} ms against {t_before * 1e3:.1f} ms "
              f"({t_now / t_before:.2f}x); unpickled and first encode {back * 1e3:.1f} ms (arrays read from the cache)")


if __name__ == "__main__":
    main()
