"""`split_many` of this tree against the same function at another commit, timed in one process
(`python benchmarks/bench_split_commits.py COMMIT`): the old `fast_search` module is loaded from `git show COMMIT` beside
the new one. Every whitespace word of UD en_ewt dev and zh_gsd dev with the pinned vocabularies; the median of 3 runs, each
the best of 3 passes."""
import importlib.util, pathlib, re, subprocess, sys, tempfile, time
from factorizer_nb.factorizer import fast_search as new
from factorizer_nb.factorizer.tokenizer import Factorizer
from factorizer_nb.core.settings import load_settings
from factorizer_nb.core.corpora import ud_sentences
from factorizer_nb.core.text import marked_bytes


def old_module(commit: str):
    "`factorizer.fast_search` as it was at `commit`, imported under another name (its relative imports made absolute)."
    src = subprocess.run(["git", "show", f"{commit}:factorizer_nb/factorizer/fast_search.py"], capture_output=True,
                         text=True, check=True).stdout
    src = re.sub(r"from \.\.core", "from factorizer_nb.core", src)
    src = re.sub(r"from \.(\w+)", r"from factorizer_nb.factorizer.\1", src)
    path = pathlib.Path(tempfile.mkdtemp()) / "old_fast_search.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("old_fast_search", path)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    return mod


def best(fn, k=3):
    "Fastest of k runs of fn() in seconds, after one untimed run."
    fn(); ts = []
    for _ in range(k):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return min(ts)


def main(commit: str):
    old = old_module(commit)
    for lang in ["en", "zh"]:
        fz = Factorizer.from_pretrained(lang)
        raws = [marked_bytes(w) for s in ud_sentences(load_settings(lang)["ud_eval"]) for w in s]
        a, b = old.split_many(fz.vocab.trie, raws, fz.alpha_split), new.split_many(fz.vocab.trie, raws, fz.alpha_split)
        if not ((a.counts == b.counts).all() and (a.ends == b.ends).all() and (a.ents == b.ents).all()):
            raise SystemExit(f"{lang}: the splits differ from {commit}'s")
        ratios, rates = [], []
        for _ in range(3):
            to = best(lambda: old.split_many(fz.vocab.trie, raws, fz.alpha_split))
            tn = best(lambda: new.split_many(fz.vocab.trie, raws, fz.alpha_split))
            ratios.append(to / tn); rates.append((len(raws) / to, len(raws) / tn))
        m = sorted(range(3), key=lambda i: ratios[i])[1]
        print(f"{lang}: {len(raws):,} words; split_many at {commit}: {rates[m][0]:,.0f} words/s, "
              f"now: {rates[m][1]:,.0f} words/s; ratio {ratios[m]:.2f} (runs {', '.join(f'{r:.2f}' for r in ratios)})", flush=True)


if __name__ == "__main__": main(sys.argv[1] if len(sys.argv) > 1 else "main")
