"""The compiled search (`factorizer.fast_search`) against the pure-Python reference (`factorizer.search`): the same split, cost and
sampled split on random vocabularies and on every word of UD en_ewt dev, and batch results that do not depend on the number
of threads or on how a batch is cut up."""
import math, multiprocessing, os, pickle
from functools import lru_cache

import pytest
from hypothesis import given, settings, strategies as st

from factorizer_nb.factorizer.vocab import unigram_standin_vocab
from factorizer_nb.core.text import BOW, EOW, marked_bytes
from factorizer_nb.core.settings import load_settings
from factorizer_nb.core.corpora import ud_sentences, word_counts
from factorizer_nb.factorizer.fast_search import HAVE_NUMBA, split_many
from factorizer_nb.factorizer.search import shortest_split
from factorizer_nb.factorizer.tokenizer import Factorizer
from factorizer_nb.factorizer.vocab import Vocabulary, byte_complete, bytes_subword, escape_bytes, triplet_to_flat
from fixtures import fields, needs_data, run_python

pytestmark = pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed: the tokenizer uses the reference search")

ALPHABET = "ab" + "é" + "日" + BOW + EOW          # one-, two- and three-byte characters, and the marks themselves
logps = st.integers(min_value=-24, max_value=-1).map(lambda k: k / 4)          # exact in binary: ties compare exactly
pieces = st.text(alphabet=ALPHABET, min_size=1, max_size=4).map(lambda s: s.encode())
byte_pieces = st.binary(min_size=1, max_size=3)                                 # stray bytes, NUL included
vocabs = st.dictionaries(st.one_of(pieces, byte_pieces), logps, min_size=1, max_size=30)
words = st.text(alphabet=ALPHABET, min_size=0, max_size=8)


def make_vocab(d):
    return Vocabulary([(bytes_subword(k), (i % 256, i // 256, 7), lp) for i, (k, lp) in enumerate(sorted(d.items()))])


def reference(vocab, word, alpha, sigma=0.0, seed=None):
    "(end positions, entries' triplets) of the reference split of `word` with the tokenizer's mark rules, or None."
    raw = marked_bytes(word); n = len(raw)
    inner = BOW in word or EOW in word
    ok = (lambda i, p: not ((i and p.startswith(escape_bytes(BOW.encode()))) or (i + len(p) < n and p.endswith(escape_bytes(EOW.encode()))))) if inner else None
    path = shortest_split(vocab, escape_bytes(raw), alpha, sigma, seed, blocked=(1, 2, n - 2, n - 1), edge_ok=ok)
    return None if path is None else ([b for _, b, _, _ in path], [triplet_to_flat(*t) for *_, t in path])


def compiled(vocab, words, alpha, sigma=0.0, seeds=None, threads=1):
    raws = [marked_bytes(w) for w in words]
    s = split_many(vocab.trie, raws, alpha, sigma, seeds, [BOW in w or EOW in w for w in words], num_threads=threads)
    out = []
    for w in range(len(words)):
        c, o = int(s.counts[w]), int(s.offs[w])
        out.append(None if c < 0 else (s.ends[o:o + c].tolist(), vocab.trie.flat[s.ents[o:o + c]].tolist()))
    return out


@settings(max_examples=300, deadline=None)
@given(vocabs, st.lists(words, max_size=6), st.integers(0, 12).map(lambda k: k / 4))
def test_compiled_matches_reference(d, ws, alpha):
    v = make_vocab(d)
    assert compiled(v, ws, alpha) == [reference(v, w, alpha) for w in ws]


@settings(max_examples=200, deadline=None)
@given(vocabs, st.lists(words, max_size=6), st.lists(st.integers(0, 2**64 - 1), min_size=6, max_size=6), st.sampled_from([0.02, 0.5, 2.0]))
def test_sampled_splits_match_reference(d, ws, seeds, sigma):
    v = make_vocab(d)
    got = compiled(v, ws, 0.1, sigma, seeds[:len(ws)])
    assert got == [reference(v, w, 0.1, sigma, s) for w, s in zip(ws, seeds)]
    assert compiled(v, ws, 0.1, sigma, seeds[:len(ws)], threads=2) == got


@lru_cache(maxsize=None)
def _standin():
    "A byte-complete stand-in vocabulary from wordfreq's English list (the benchmark's)."
    return byte_complete(unigram_standin_vocab(word_counts("wordfreq:en", top_n=20000), 4000))


@lru_cache(maxsize=None)
def _ewt_dev():
    return [" ".join(s) for s in ud_sentences(load_settings("en")["ud_eval"])]


@needs_data
@pytest.mark.parametrize("sigma,specials", [(0.0, False), (0.02, False), (0.0, True)])
def test_every_ewt_dev_word_splits_as_the_reference(sigma, specials):
    "Same pieces, triplets, offsets and scores as the reference search on every whitespace word of en_ewt dev, optimal and sampled."
    texts = _ewt_dev()
    fast = Factorizer(_standin(), sigma_sample=sigma, seed=3, cache_chars=0)
    slow = Factorizer(_standin(), sigma_sample=sigma, seed=3, cache_chars=0, compiled=False)
    a, b = fast.encode_batch(texts, add_special_tokens=specials, num_workers=2), slow.encode_batch(texts, add_special_tokens=specials)
    assert [fields(e) for e in a] == [fields(e) for e in b]
    assert sum(len(e.ids) for e in a) > sum(len(t.split()) for t in texts)


@needs_data
@pytest.mark.parametrize("specials,workers,cache_chars", [(False, 2, 1 << 22), (True, 1, 1 << 22), (False, 2, 3000)])
def test_every_ewt_dev_word_splits_as_the_reference_with_the_word_table(specials, workers, cache_chars):
    "The same with the compiled word table on: a first pass that fills it, a second read from it, and a small table that fills up."
    texts = _ewt_dev()
    fast = Factorizer(_standin(), cache_chars=cache_chars)
    slow = Factorizer(_standin(), cache_chars=0, compiled=False)
    b = [fields(e) for e in slow.encode_batch(texts, add_special_tokens=specials)]
    for _ in range(2):
        assert [fields(e) for e in fast.encode_batch(texts, add_special_tokens=specials, num_workers=workers)] == b
    assert [fields(fast.encode(t, add_special_tokens=specials)) for t in texts[:300]] == b[:300]
    assert fast._text_encoder.table[0][0] > (100 if cache_chars > 3000 else 0)       # words in the table


def test_word_table_is_keyed_by_alpha_and_starts_empty():
    "A table filled under one alpha_split is not read under another; a pickled or copied tokenizer starts with an empty one."
    import copy
    v = Vocabulary([(BOW + "ab" + EOW, (0, 0, 1), -10.0), (BOW + "a", (0, 0, 2), -1.0), ("b" + EOW, (0, 0, 3), -1.0),
                    (BOW, (0, 0, 4), -5.0), (EOW, (0, 0, 5), -5.0), ("a", (0, 0, 6), -5.0), ("b", (0, 0, 7), -5.0)])
    texts = ["ab ab", "ab", "b a ab"]
    tok = Factorizer(v, alpha_split=0.0)                                 # ⸥a | b⸤ (cost 2), not ⸥ab⸤ (10)
    first = [fields(e) for e in tok.encode_batch(texts)]
    assert tok._text_encoder.table[0][0] > 0
    tok.alpha_split = 10.0                                               # ⸥ab⸤ (20), not ⸥a | b⸤ (22)
    other = Factorizer(v, alpha_split=10.0, cache_chars=0)
    assert [fields(e) for e in tok.encode_batch(texts)] == [fields(e) for e in other.encode_batch(texts)] != first
    assert [fields(tok.encode(t)) for t in texts] == [fields(other.encode(t)) for t in texts]
    for fresh in (copy.copy(tok), copy.deepcopy(tok), pickle.loads(pickle.dumps(tok))):
        assert fresh._text_encoder_of().table[0][0] == 0


def test_equal_costs_split_as_dijkstra():
    "The forward pass breaks ties as the reference's heap does: of equal-cost predecessors, the smallest (cost, position)."
    v = Vocabulary([(BOW, (0, 0, 1), -3.0), (BOW + "a", (0, 0, 2), -1.0), ("a", (0, 0, 3), -1.0), ("ab", (0, 0, 4), -1.0),
                    ("b", (0, 0, 5), -3.0), (EOW, (0, 0, 6), -1.0)])
    ref = reference(v, "ab", 0.0)
    assert compiled(v, ["ab"], 0.0) == [ref]
    assert [triplet_to_flat(0, 0, k) for k in (2, 5, 6)] == ref[1]     # ⸥a | b | ⸤, not ⸥ | ab | ⸤
    assert Factorizer(v, alpha_split=0.0).encode("ab").tokens == [BOW + "a", "b", EOW]


@needs_data
def test_one_text_per_call_matches_the_reference():
    "`encode` text by text (the per-call kernel, and the word cache for single words) gives the reference search's encodings."
    texts = _ewt_dev()[:400]
    words = [w for t in texts for w in t.split()][:3000]
    cached, uncached, slow = Factorizer(_standin()), Factorizer(_standin(), cache_chars=0), Factorizer(_standin(), compiled=False)
    for t in texts + words + words:                                     # words twice: the second time from the cache
        assert (cached.encode(t)) == (uncached.encode(t)) == (slow.encode(t)), t
    assert len(cached._call_cache) > 100


@needs_data
def test_batches_do_not_change_samples():
    "A sampled text depends on the generator's state only: one batch, two threads, or text by text give the same."
    texts = _ewt_dev()[:300]
    one = Factorizer(_standin(), sigma_sample=0.5, seed=9).encode_batch(texts)
    two = Factorizer(_standin(), sigma_sample=0.5, seed=9).encode_batch(texts, num_workers=2)
    each = Factorizer(_standin(), sigma_sample=0.5, seed=9)
    assert [e.ids for e in one] == [e.ids for e in two] == [each.encode(t).ids for t in texts]
    assert [e.ids for e in one] != [e.ids for e in Factorizer(_standin(), sigma_sample=0.5, seed=10).encode_batch(texts)]


def _encode_ids(args):
    tok, text = args
    return tok.encode(text).ids


def test_tokenizer_pickles_to_worker_processes():
    "A tokenizer (with its trie built) goes to `multiprocessing` workers and splits as in the parent."
    tok = Factorizer(_standin(), sigma_sample=0.02, seed=1)
    texts = ["the naïve café 🙂", "", "日本語 ⸥odd⸤ marks", "tokenization"]
    assert pickle.loads(pickle.dumps(tok)).encode_batch(texts)[0].ids == tok.encode_batch(texts)[0].ids
    det = Factorizer(_standin())
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        assert pool.map(_encode_ids, [(det, t) for t in texts]) == [det.encode(t).ids for t in texts]


@pytest.mark.parametrize("text", ["", " ", "🙂", "👩‍👩‍👧", "a\ud800b", "⸥", "t" * 5000])
def test_odd_input_matches_reference(text):
    fast, slow = Factorizer(_standin()), Factorizer(_standin(), compiled=False)
    assert (fast.encode(text)) == (slow.encode(text))


def test_bad_arguments():
    tok = Factorizer(_standin())
    with pytest.raises(ValueError, match="num_workers"): tok.encode_batch(["a"], num_workers=0)
    with pytest.raises(ValueError, match="needs a seed"): split_many(tok.vocab.trie, [b"a"], 0.1, 0.5)
    with pytest.raises(TypeError, match="str texts"): tok.encode_batch(["a", None])


@needs_data
@pytest.mark.parametrize("sigma", [0.0, 0.02])
def test_ids_fast_path_matches_encodings(sigma):
    "`encode_ids_batch` (straight from the compiled search) gives the ids of `encode_batch` for the same generator state."
    texts = _ewt_dev()[:500] + ["", "a\ud800b 🙂 ⸥x⸤"]
    ids = Factorizer(_standin(), sigma_sample=sigma, seed=4).encode_ids_batch(texts, num_workers=2)
    encs = Factorizer(_standin(), sigma_sample=sigma, seed=4, compiled=False).encode_batch(texts)
    assert [a.tolist() for a in ids] == [[list(t) for t in e.ids] for e in encs]


def test_without_numba_the_reference_search_runs():
    "With numba missing, the module still imports and the tokenizer falls back to the pure-Python search."
    import subprocess, sys
    code = ("import sys; sys.modules['numba'] = None\n"
            "from factorizer_nb.factorizer.tokenizer import Factorizer\nfrom factorizer_nb.factorizer.vocab import Vocabulary\n"
            "v = Vocabulary([('⸥a⸤', (1, 2, 3), -0.5), ('⸥', (0, 0, 1), -3.0), ('⸤', (0, 0, 2), -3.0), ('b', (0, 0, 3), -1.0)])\n"
            "f = Factorizer(v); assert not f.compiled\n"
            "assert f.encode('a b').tokens == ['⸥a⸤', '⸥', 'b', '⸤'], f.encode('a b').tokens\n"
            "assert [a.tolist() for a in f.encode_ids_batch(['a b'])] == [[[1, 2, 3], [0, 0, 1], [0, 0, 3], [0, 0, 2]]]\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_python_threads_may_encode_at_once():
    "Calls from several Python threads at once are serialized around the compiled kernel and give the same results."
    from concurrent.futures import ThreadPoolExecutor
    tok = Factorizer(_standin())
    texts = [f"thread {k} tokenizes naïve words 🙂 {k * 7}" for k in range(64)]
    expected = [tok.encode_ids_batch([t], num_workers=2)[0].tolist() for t in texts]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda t: tok.encode_ids_batch([t], num_workers=2)[0].tolist(), texts))
    assert got == expected


def test_threads_share_one_text_calls_and_row_blocks(monkeypatch):
    "`encode` from several threads at once on one tokenizer (one scratch state, one row block that fills and is replaced)."
    from concurrent.futures import ThreadPoolExecutor
    from factorizer_nb.factorizer import word_table
    tok = Factorizer(_standin(), cache_chars=0)
    texts = [f"thread {k} tokenizes naïve words 🙂 {k * 7}" + " long" * (k % 5) for k in range(400)]
    expected = [tok.encode_batch([t])[0].ids for t in texts]
    monkeypatch.setattr(word_table, "ROW_BLOCK", 128)                  # small blocks: many fill up
    with ThreadPoolExecutor(4) as pool:
        encodings = list(pool.map(tok.encode, texts))                  # kept: their rows stay in the blocks they point to
    assert len({id(e._build.args[0]) for e in encodings}) > 10         # many blocks were filled and replaced
    assert [e.ids for e in encodings] == expected


def test_split_leaves_torch_threads_alone():
    "A parallel split does not change how many threads torch's CPU kernels use (numba's OpenMP layer would: they share libgomp)."
    code = """
        import torch
        from factorizer_nb.factorizer.fast_search import split_many
        from factorizer_nb.factorizer.vocab import Vocabulary
        from factorizer_nb.core.text import marked_bytes
        v = Vocabulary([("⸥a", (1, 2, 3), -1.0), ("b⸤", (1, 2, 4), -1.0), ("ab", (1, 2, 5), -2.0)])
        before = torch.get_num_threads()
        split_many(v.trie, [marked_bytes("ab")] * 100, 0.1, num_threads=2)
        print(before, torch.get_num_threads())
    """
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"} | {"OMP_NUM_THREADS": "1"}
    out = run_python(code, env).split()
    assert out == ["1", "1"], out
