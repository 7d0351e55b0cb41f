"""Tokenizer speed where users call it, and vocabulary memory, as ratios to references measured in the same run (`make bench`;
nothing here is a pass/fail threshold).

Speed: UD en_ewt dev (2,001 sentences, 24,787 whitespace words), encoded three ways: one word per call, one sentence per
call, and whole batches, by every tokenizer family of the protocol, each of 8,000 pieces trained on the same top-50,000
wordfreq:en words. FACTORIZER uses the unigram stand-in vocabulary of factorizer_nb.baselines.adapters made byte-complete
(`factorizer.vocab.byte_complete`): the search cost depends on the vocabulary's size and piece lengths, not on where the scores
came from. Each row is the best of `--repeats` timed passes after one untimed pass, so a cache is warm unless the row says
"first pass" (a fresh tokenizer, one pass). The reference of each table is HF `tokenizers`' byte-level BPE making the same
call. The authors' pure-Python `factorizer.py` is not shipped (its code is theirs); `--authors PATH` times a copy of it on the
same vocabulary written in its DAWG format, and our pure-Python reference search (`compiled=False`), the same algorithm,
stands in for it otherwise.

Memory: a vocabulary of random subwords whose file is about the size of the paper's English DAWG (about 129 MB),
loaded in a fresh process (numba's code loaded first); resident and peak memory above that baseline.

Calls as users make them: the pinned vocabularies (`Factorizer.from_pretrained`, `--pinned`, default English and
Chinese) and the stand-in, each call reading the field a user reads (`.ids`, `.tokens`, `.offsets`; one row reads none
and says so), against HF's byte-level BPE reading the same field in the same run, and the `transformers` call
(`FactorizerTokenizer` against `PreTrainedTokenizerFast` over that BPE, batches of 32 sentences); medians of `--runs`.

    python benchmarks/bench_encode.py [--vocab-size 8000] [--top-words 50000] [--repeats 3] [--runs 3] [--memory-entries 1000000] [--authors PATH]
        [--pinned en zh] [--only users speed first-call memory]
"""
import argparse, importlib.util, json, os, platform, random, subprocess, sys, tempfile, time
from factorizer_nb.core.settings import load_settings
from factorizer_nb.core.corpora import word_counts, ud_sentences, text_lines
from factorizer_nb.core.text import mark, marked_bytes
from factorizer_nb.baselines.adapters import HFByteBPE, SentencePieceTokenizer, train_sentencepiece, train_hf_bpe
from factorizer_nb.factorizer.vocab import unigram_standin_vocab
from factorizer_nb.factorizer.fast_search import HAVE_NUMBA, split_many
from factorizer_nb.core.protocol import CharTokenizer
from factorizer_nb.factorizer.tokenizer import Factorizer
from factorizer_nb.factorizer.vocab import Vocabulary, byte_complete, write_authors_dawg
from factorizer_nb.sage.tokenizer import SaGeTokenizer
from factorizer_nb.sage.corpus import initial_vocabulary
from factorizer_nb.bpe_vs_unigram.classic import BPE

CORES = os.cpu_count() or 1


def best_time(fn, repeats):
    "Fastest of `repeats` runs of fn(), in seconds (after one untimed run)."
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter(); fn(); times.append(time.perf_counter() - t0)
    return min(times)


def each(fn, items):
    "Call fn on every item, keeping nothing (the way a loop over words or sentences calls a tokenizer)."
    for x in items: fn(x)


def once(make, fn):
    "Seconds of one pass fn(tok) on a fresh tokenizer from make() (a cold cache)."
    tok = make(); t0 = time.perf_counter(); fn(tok); return time.perf_counter() - t0


def authors_tokenizer(path, vocab, alpha):
    "The authors' `factorizer.py` (a copy the user supplies) on `vocab` written in their DAWG format, or None."
    if not path: return None
    spec = importlib.util.spec_from_file_location("authors_factorizer", path)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    dawg_path = write_authors_dawg(vocab.items(), os.path.join(tempfile.mkdtemp(), "authors.dawg"))
    return mod.Factorizer(str(dawg_path), alpha=alpha)


def print_table(title, rows, n_words, ref):
    "One table: words/s of each (what, cores, seconds) row and its ratio to the row named `ref`; {(what, cores): words/s}."
    wps = {(what, cores): n_words / sec for what, cores, sec in rows}
    ref_wps = wps[next(k for k in wps if k[0] == ref)]
    print(f"\n{title}\n| what | cores | words/s | ratio to {ref} |\n|---|---:|---:|---:|")
    for what, cores, sec in rows: print(f"| {what} | {cores} | {n_words / sec:,.0f} | {n_words / sec / ref_wps:.2f} |")
    return wps


def speed(a):
    S = load_settings("en")
    counts = word_counts(S["freq"], top_n=a.top_words)
    sents = [" ".join(s) for s in ud_sentences(S["ud_eval"])]
    words = [w for s in sents for w in s.split()]
    marked, raws = [mark(w) for w in words], [marked_bytes(w) for w in words]
    vocab = byte_complete(unigram_standin_vocab(counts, a.vocab_size))
    alpha, sigma, p_drop = S["alpha_split"], S["sigma_sample"], S["bpe_dropout"]
    sp = train_sentencepiece(counts, a.vocab_size, "bpe")
    hf = train_hf_bpe(counts, a.vocab_size)
    fz = lambda **kw: Factorizer(vocab, alpha_split=alpha, **kw)
    cached, uncached, sampler = fz(), fz(cache_chars=0), fz(sigma_sample=sigma, seed=0)
    reference, ref_sampler = fz(cache_chars=0, compiled=False), fz(sigma_sample=sigma, seed=0, compiled=False)
    adapters = {   # every family of the protocol, 8,000 pieces (the classic BPE, a tutorial in pure Python, 2,000)
        "sentencepiece BPE (adapter)": SentencePieceTokenizer(train_sentencepiece(counts, a.vocab_size, "bpe", markers=False)),
        "sentencepiece Unigram LM (adapter)": SentencePieceTokenizer(train_sentencepiece(counts, a.vocab_size, "unigram", markers=False)),
        "HF byte-level BPE (adapter)": HFByteBPE(hf),
        "SaGe tokenizer (adapter, BPE vocabulary of gensim's Wikipedia sample)": SaGeTokenizer(initial_vocabulary(list(text_lines("gensim:enwiki")), a.vocab_size)),
        "classic BPE (tutorial, 2,000 merges)": BPE().train(dict(counts[:5000]), 2000),
        "characters (CharTokenizer)": CharTokenizer(),
    }
    authors = authors_tokenizer(a.authors, vocab, alpha)
    t = lambda fn: best_time(fn, a.repeats)

    def one_run():
        "Every table once; the goals' (what, ratio, goal)."
        print(f"en_ewt dev: {len(sents)} sentences, {len(words)} words; {a.vocab_size} pieces trained on the top {a.top_words} wordfreq:en words; "
              f"{platform.processor() or platform.machine()}, {CORES} cores, best of {a.repeats}; numba: {HAVE_NUMBA}")

        per_word = [("HF byte-level BPE, encode(word) (reference)", 1, t(lambda: each(hf.encode, words))),
                    ("FACTORIZER encode(word), no cache", 1, t(lambda: each(uncached.encode, words))),
                    ("FACTORIZER encode(word), default cache, first pass", 1, once(fz, lambda k: each(k.encode, words))),
                    ("FACTORIZER encode(word), default cache, warm", 1, t(lambda: each(cached.encode, words))),
                    ("FACTORIZER reference search (pure Python), encode(word), no cache", 1, t(lambda: each(reference.encode, words)))]
        if authors:
            per_word.append(("authors' factorizer.py, encode(word).tokens (its lru_cache)", 1, t(lambda: each(reads(authors.encode, "tokens"), words))))
            per_word.append(("FACTORIZER encode(word).tokens, no cache", 1, t(lambda: each(reads(uncached.encode, "tokens"), words))))
        per_word += [(f"{n}, encode(word)", 1, t(lambda k=k: each(k.encode, words))) for n, k in adapters.items()]
        w1 = print_table("One word per call", per_word, len(words), per_word[0][0])

        per_sent = [("HF byte-level BPE, encode(sentence) (reference)", 1, t(lambda: each(hf.encode, sents))),
                    ("FACTORIZER encode(sentence), no cache", 1, t(lambda: each(uncached.encode, sents))),
                    ("FACTORIZER encode(sentence), default cache", 1, t(lambda: each(cached.encode, sents))),
                    (f"FACTORIZER encode(sentence), sampling σ={sigma:g}", 1, t(lambda: each(sampler.encode, sents))),
                    ("FACTORIZER reference search, encode(sentence)", 1, t(lambda: each(reference.encode, sents))),
                    (f"FACTORIZER reference search, encode(sentence), sampling σ={sigma:g}", 1, t(lambda: each(ref_sampler.encode, sents)))]
        if authors:
            per_sent.append(("authors' factorizer.py, encode(sentence).tokens", 1, t(lambda: each(reads(authors.encode, "tokens"), sents))))
        per_sent += [(f"{n}, encode(sentence)", 1, t(lambda k=k: each(k.encode, sents))) for n, k in adapters.items()]
        s1 = print_table("One sentence per call", per_sent, len(words), per_sent[0][0])

        batch = [("HF byte-level BPE, encode_batch(sentences) (reference)", CORES, t(lambda: hf.encode_batch(sents))),
                 ("FACTORIZER encode_batch(sentences) → Encodings", 1, t(lambda: uncached.encode_batch(sents))),
                 ("FACTORIZER encode_batch(sentences) → Encodings", CORES, t(lambda: uncached.encode_batch(sents, num_workers=CORES))),
                 (f"FACTORIZER encode_batch(sentences) → Encodings, sampling σ={sigma:g}", CORES, t(lambda: sampler.encode_batch(sents, num_workers=CORES))),
                 ("FACTORIZER encode_batch(sentences), every Encoding read", CORES, t(lambda: list(uncached.encode_batch(sents, num_workers=CORES)))),
                 ("FACTORIZER encode_ids_batch(sentences)", CORES, t(lambda: uncached.encode_ids_batch(sents, num_workers=CORES))),
                 (f"FACTORIZER encode_ids_batch(sentences), sampling σ={sigma:g}", CORES, t(lambda: sampler.encode_ids_batch(sents, num_workers=CORES))),
                 ("FACTORIZER compiled search only, every word (split_many)", 1, t(lambda: split_many(vocab.trie, raws, alpha))),
                 ("FACTORIZER compiled search only, every word (split_many)", CORES, t(lambda: split_many(vocab.trie, raws, alpha, num_threads=CORES))),
                 ("sentencepiece BPE, encode(list of marked words), library call", 1, t(lambda: sp.encode(marked, num_threads=1))),
                 (f"sentencepiece BPE-dropout {p_drop:g} (its own, unseeded), encode(list of words)", 1,
                  t(lambda: sp.encode(marked, num_threads=1, enable_sampling=True, alpha=p_drop, nbest_size=-1))),
                 (f"seeded BPE-dropout {p_drop:g} (ours, in sentencepiece's merge order), dropout_word per word", 1,
                  t(lambda d=SentencePieceTokenizer(sp, alpha=p_drop, seed=0): [d.dropout_word(m) for m in marked]))]
        batch += [(f"{n}, encode_batch(sentences)", 1, t(lambda k=k: k.encode_batch(sents))) for n, k in adapters.items()]
        b1 = print_table("Batches", batch, len(words), batch[0][0])

        w1, s1 = {k: v for (k, c), v in w1.items()}, {k: v for (k, c), v in s1.items()}        # one core each
        authors_word = w1.get("authors' factorizer.py, encode(word).tokens (its lru_cache)")
        base_word = authors_word or w1["FACTORIZER reference search (pure Python), encode(word), no cache"]
        ours_word = w1["FACTORIZER encode(word).tokens, no cache"] if authors_word else w1["FACTORIZER encode(word), no cache"]
        base_name = "the authors' per-word call" if authors_word else "the pure-Python reference search per word (stand-in for the authors')"
        hf_word, hf_sent, hf_batch = w1[per_word[0][0]], s1[per_sent[0][0]], b1[(batch[0][0], CORES)]
        goals = [
            (f"encode(word){'.tokens' if authors_word else ''}, no cache ≥ 5 × {base_name}", ours_word / base_word, 5),
            ("encode(word), default cache, warm ≥ HF encode(word)", w1["FACTORIZER encode(word), default cache, warm"] / hf_word, 1),
            ("encode(word), default cache, first pass ≥ HF encode(word)", w1["FACTORIZER encode(word), default cache, first pass"] / hf_word, 1),
            ("default cache, first pass ≥ no cache (one word per call)", w1["FACTORIZER encode(word), default cache, first pass"] / w1["FACTORIZER encode(word), no cache"], 1),
            ("encode(word), no cache ≥ HF encode(word)", w1["FACTORIZER encode(word), no cache"] / hf_word, 1),
            ("encode(sentence), default cache ≥ 1.2 × HF encode(sentence)", s1["FACTORIZER encode(sentence), default cache"] / hf_sent, 1.2),
            (f"encode(sentence), sampling ≥ 5 × the reference search's sampling per sentence",
             s1[f"FACTORIZER encode(sentence), sampling σ={sigma:g}"] / s1[f"FACTORIZER reference search, encode(sentence), sampling σ={sigma:g}"], 5),
            (f"encode_batch(sentences), {CORES} threads ≥ HF encode_batch", b1[("FACTORIZER encode_batch(sentences) → Encodings", CORES)] / hf_batch, 1),
            (f"encode_batch(sentences), sampling, {CORES} threads ≥ HF encode_batch",
             b1[(f"FACTORIZER encode_batch(sentences) → Encodings, sampling σ={sigma:g}", CORES)] / hf_batch, 1),
        ]
        print("\nGoals of issues #29 and #67 in this run (ratio against the goal's)\n| goal | ratio | goal | met |\n|---|---:|---:|---|")
        for what, ratio, goal in goals: print(f"| {what} | {ratio:.2f} | {goal} | {'yes' if ratio >= goal else 'no'} |")
        return goals

    runs = [one_run() for _ in range(a.runs)]
    if a.runs > 1:
        print(f"\nGoals of issues #29 and #67, median of {a.runs} runs (each run's ratio in brackets)\n| goal | median ratio | runs | goal | met |\n|---|---:|---|---:|---|")
        for k, (what, _, goal) in enumerate(runs[0]):
            ratios = sorted(r[k][1] for r in runs)
            med = ratios[len(ratios) // 2] if len(ratios) % 2 else (ratios[len(ratios) // 2 - 1] + ratios[len(ratios) // 2]) / 2
            print(f"| {what} | {med:.2f} | {', '.join(f'{r[k][1]:.2f}' for r in runs)} | {goal} | {'yes' if med >= goal else 'no'} |")


FIELDS = ("ids", "tokens", "offsets")          # what a user reads of an encoding


def reads(encode, field):
    "A call of `encode` that reads `field` of what it returns, as a user does."
    return lambda x: getattr(encode(x), field)


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


def hf_fast(hf):
    "`transformers`' PreTrainedTokenizerFast over a copy of `hf`, adding [CLS] and [SEP] as FactorizerTokenizer does."
    from tokenizers import Tokenizer, processors
    from transformers import PreTrainedTokenizerFast
    t = Tokenizer.from_str(hf.to_str())
    t.add_special_tokens(["[PAD]", "[CLS]", "[SEP]"])
    t.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
                                                    special_tokens=[(s, t.token_to_id(s)) for s in ("[CLS]", "[SEP]")])
    return PreTrainedTokenizerFast(tokenizer_object=t, pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]")


def users(a):
    """Calls as users make them (issue #79): the pinned vocabularies of `--pinned`, every field a user reads, against HF
    reading the same field in the same run; the median of `--runs` runs."""
    from factorizer_nb.factorizer.pretrained import pretrained_languages
    from tokenizers import Tokenizer
    for lang in a.pinned:
        if lang not in pretrained_languages(): raise SystemExit(f"no pinned vocabulary for {lang!r}")
        S = load_settings(lang)
        sents = [" ".join(s) for s in ud_sentences(S["ud_eval"])]
        words = [w for s in sents for w in s.split()]
        counts = word_counts(S["freq"], top_n=a.top_words)
        hf = train_hf_bpe(counts, a.vocab_size)
        pinned = Factorizer.from_pretrained(lang)
        tokenizers = {f"pinned `{lang}` ({len(pinned.vocab):,} subwords)": pinned}
        if lang == "en":
            tokenizers[f"stand-in ({a.vocab_size:,} pieces)"] = Factorizer(byte_complete(unigram_standin_vocab(counts, a.vocab_size)))
        t = lambda fn: best_time(fn, a.repeats)
        results = {}                                   # row -> [(FACTORIZER words/s, HF words/s), ...] per run
        for run in range(a.runs):
            for name, fz in tokenizers.items():
                nocache = Factorizer(fz.vocab, alpha_split=fz.alpha_split, cache_chars=0)
                rows = [(f"{name}: `encode(word)`, no field read, no cache", lambda: each(nocache.encode, words),
                         lambda: each(hf.encode, words))]
                for f in FIELDS:
                    rows.append((f"{name}: `encode(word).{f}`, no cache", lambda f=f: each(reads(nocache.encode, f), words),
                                 lambda f=f: each(reads(hf.encode, f), words)))
                rows.append((f"{name}: `encode(word).ids`, default cache, warm", lambda: each(reads(fz.encode, "ids"), words),
                             lambda: each(reads(hf.encode, "ids"), words)))
                for f in FIELDS:
                    rows.append((f"{name}: `encode(sentence).{f}`, default cache, warm", lambda f=f: each(reads(fz.encode, f), sents),
                                 lambda f=f: each(reads(hf.encode, f), sents)))
                rows.append((f"{name}: `encode(sentence).ids`, no cache", lambda: each(reads(nocache.encode, "ids"), sents),
                             lambda: each(reads(hf.encode, "ids"), sents)))
                rows.append((f"{name}: `encode_batch(sentences)`, every row's `.ids`, {CORES} threads, default cache, warm",
                             lambda: [e.ids for e in fz.encode_batch(sents, num_workers=CORES)],
                             lambda: [e.ids for e in hf.encode_batch(sents)]))
                rows.append((f"{name}: `encode_batch(sentences)`, every row's `.ids`, {CORES} threads, no cache",
                             lambda: [e.ids for e in nocache.encode_batch(sents, num_workers=CORES)],
                             lambda: [e.ids for e in hf.encode_batch(sents)]))
                rows.append((f"{name}: `encode_ids_batch(sentences)` against HF `encode_batch`, every row's `.ids`, {CORES} threads",
                             lambda: nocache.encode_ids_batch(sents, num_workers=CORES),
                             lambda: [e.ids for e in hf.encode_batch(sents)]))
                if lang == "en":
                    from factorizer_nb.hf import FactorizerTokenizer
                    ours, theirs = FactorizerTokenizer(factorizer=nocache), hf_fast(hf)
                    batches = [sents[i:i + 32] for i in range(0, len(sents), 32)]
                    call = lambda tok: [tok(b, padding=True, truncation=True, return_tensors="pt") for b in batches]
                    rows.append((f"{name}: `transformers` call, batches of 32, padding and truncation, tensors, against "
                                 "`PreTrainedTokenizerFast`", lambda: call(ours), lambda: call(theirs)))
                raws = [marked_bytes(w) for w in words]
                rows.append((f"{name}: the compiled search alone (`split_many`, 1 thread, no Python per word) against HF "
                             "`encode(word).ids`", lambda: split_many(fz.vocab.trie, raws, fz.alpha_split),
                             lambda: each(reads(hf.encode, "ids"), words)))
                for what, ours_fn, hf_fn in rows:
                    results.setdefault(what, []).append((len(words) / t(ours_fn), len(words) / t(hf_fn)))
                # one cold pass each: a fresh tokenizer on each side (default caches), its first call timed with the rest
                fresh_fz = lambda **kw: (lambda: Factorizer(fz.vocab, alpha_split=fz.alpha_split, **kw))
                fresh_hf = lambda: Tokenizer.from_str(hf.to_str())
                cold = [("`encode(word).ids`, no cache", fresh_fz(cache_chars=0), lambda k: each(reads(k.encode, "ids"), words)),
                        ("`encode(word).ids`, default cache", fresh_fz(), lambda k: each(reads(k.encode, "ids"), words)),
                        ("`encode(sentence).ids`, default cache", fresh_fz(), lambda k: each(reads(k.encode, "ids"), sents)),
                        ("`encode(sentence).tokens`, default cache", fresh_fz(), lambda k: each(reads(k.encode, "tokens"), sents)),
                        (f"`encode_batch(sentences)`, every row's `.ids`, {CORES} threads, default cache", fresh_fz(),
                         lambda k: [e.ids for e in (k.encode_batch(sents, num_workers=CORES) if isinstance(k, Factorizer)
                                                    else k.encode_batch(sents))])]
                for what, make, fn in cold:
                    results.setdefault(f"{name}: {what}, one cold pass (fresh tokenizers, first call included)", []).append(
                        (len(words) / once(make, fn), len(words) / once(fresh_hf, fn)))
        print(f"\nCalls as users make them, {lang}: UD {S['ud_eval']} ({len(sents):,} sentences, {len(words):,} words); HF "
              f"byte-level BPE of {a.vocab_size:,} pieces on the top {a.top_words:,} {S['freq']} words reads the same field; "
              f"{platform.processor() or platform.machine()}, {CORES} cores; median of {a.runs} runs, each row the best of "
              f"{a.repeats} passes after one untimed pass")
        print("| call | FACTORIZER words/s | HF words/s | ratio | runs' ratios |\n|---|---:|---:|---:|---|")
        for what, rs in results.items():
            ratios = [o / h for o, h in rs]
            print(f"| {what} | {median([o for o, _ in rs]):,.0f} | {median([h for _, h in rs]):,.0f} | {median(ratios):.2f} | "
                  f"{', '.join(f'{r:.2f}' for r in ratios)} |")


_MEMORY_CHILD = """
import json, sys
def rss():
    "Resident memory now and its peak since the last reset, in bytes."
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    return int(status["VmRSS"].split()[0]) * 1024, int(status["VmHWM"].split()[0]) * 1024
from factorizer_nb.factorizer.tokenizer import Factorizer
from factorizer_nb.factorizer.vocab import Vocabulary
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


_FIRST_CALL_CHILD = """
import sys, time
t0 = time.perf_counter()
from factorizer_nb.factorizer.tokenizer import Factorizer
from factorizer_nb.factorizer.vocab import Vocabulary
t1 = time.perf_counter(); vocab = Vocabulary.load(sys.argv[1])
t2 = time.perf_counter(); tok = Factorizer(vocab)
t3 = time.perf_counter(); tok.encode("tokenization").tokens
t4 = time.perf_counter(); tok.encode("factorized").tokens
t5 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)
"""


def first_call(a):
    "A new process's first encode, after it loaded a vocabulary file (twice: the first run fills the cache folder)."
    counts = word_counts(load_settings("en")["freq"], top_n=a.top_words)
    with tempfile.TemporaryDirectory() as tmp:
        path = byte_complete(unigram_standin_vocab(counts, a.vocab_size)).save(os.path.join(tmp, "standin.dawg"))
        env = dict(os.environ, FACTORIZER_NB_CACHE=os.path.join(tmp, "cache"))
        print("\nA new process (vocabulary of the speed tables, saved to a file)\n| run | import | Vocabulary.load | Factorizer(vocab) "
              "(search arrays and numba's kernel made ready) | first encode(word) | second encode(word) |\n|---|---:|---:|---:|---:|---:|")
        for run in ("first (empty cache folder)", "second (arrays cached)"):
            out = subprocess.run([sys.executable, "-c", _FIRST_CALL_CHILD, path], capture_output=True, text=True, check=True, env=env)
            imp, load, make, first, second = map(float, out.stdout.split())
            print(f"| {run} | {imp:.2f} s | {load * 1e3:.0f} ms | {make * 1e3:.0f} ms | {first * 1e3:.2f} ms | {second * 1e6:.0f} µs |")
        print(f"Goal of issue #67: a new process's first encode, once the tokenizer is made, under 50 ms: {first * 1e3:.2f} ms, "
              f"{'met' if first < 0.05 else 'not met'}")


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
    ap.add_argument("--runs", type=int, default=3, help="runs of every speed table; the goals are judged on their median")
    ap.add_argument("--memory-entries", type=int, default=1_000_000)
    ap.add_argument("--authors", default=None, help="path of a copy of the authors' factorizer.py, timed on the same vocabulary")
    ap.add_argument("--pinned", nargs="*", default=["en", "zh"], help="languages whose pinned vocabularies the users' table times")
    ap.add_argument("--only", nargs="*", choices=["users", "speed", "first-call", "memory"], default=None,
                    help="only these sections (default: all)")
    a = ap.parse_args()
    on = lambda part: a.only is None or part in a.only
    if on("users"): users(a)
    if on("speed"): speed(a)
    if on("first-call"): first_call(a)
    if on("memory") and a.memory_entries: memory(a)


if __name__ == "__main__":
    main()
