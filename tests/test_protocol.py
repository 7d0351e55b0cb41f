"""The tokenizer contract (minbpe-style): every adapter of the project, one set of tests.

Lossless tokenizers must give back every text up to whitespace; the others (normalizing or [UNK]-producing
families) must give back text made of characters they were trained on. Offsets, word ids, special tokens,
empty input, emoji, a 10,000-character word and save -> load hold for all of them."""
import tempfile
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from factorizer_nb.core.corpora import text_lines, word_counts
from factorizer_nb.core.protocol import SPECIAL_TOKENS, CharTokenizer, Encodings, Tokenizer, load_tokenizer, pad_batch
from factorizer_nb.baselines.adapters import HFByteBPE, SentencePieceTokenizer, train_hf_bpe, train_spm_on_text
from factorizer_nb.factorizer.vocab import unigram_standin_vocab
from factorizer_nb.factorizer.tokenizer import Factorizer
from factorizer_nb.factorizer.vocab import Vocabulary, byte_complete, bytes_subword
from factorizer_nb.core.text import BOW, EOW
from factorizer_nb.sage.tokenizer import SaGeTokenizer
from factorizer_nb.sage.corpus import initial_vocabulary
from factorizer_nb.bpe_vs_unigram.classic import BPE, Unigram, WordPiece
from factorizer_nb.factorizer.reindexed import Reindexed, one_row_per_subword

TEXTS = [
    "The naïve café's 3 tokens.",
    "Tokenization  with\tfactorized\nsubwords",
    "emoji 🙂 👩‍👩‍👧 flags 🇳🇴",
    "日本語のテキスト",
    "مرحبا بالعالم",
    "e\u0301 combining and \u200bzero-width",
]
COVERED = "the cat sat on the mat"            # characters every trained tokenizer here has seen


@lru_cache(maxsize=None)
def _wiki():
    return tuple(text_lines("gensim:enwiki", limit=300))


@lru_cache(maxsize=None)
def _counts():
    return tuple(word_counts("wordfreq:en", top_n=3000))


@lru_cache(maxsize=None)
def _spm_bpe():
    "One lossless sentencepiece BPE model (identity normalization, byte fallback) for the plain and the dropout adapter."
    return train_spm_on_text(_wiki(), 700, "bpe", normalization_rule_name="identity", byte_fallback=True)


@lru_cache(maxsize=None)
def _standin_bytes():
    "The byte-complete stand-in vocabulary several adapters share (a vocabulary is never changed by a tokenizer)."
    return byte_complete(unigram_standin_vocab(list(_counts()), 1200))


def _make(name: str) -> Tokenizer:
    if name == "chars": return CharTokenizer()
    if name == "factorizer": return Factorizer(unigram_standin_vocab(list(_counts()), 1200), unk="parts")
    if name == "factorizer-bytes": return Factorizer(_standin_bytes())
    if name == "factorizer-sampling": return Factorizer(_standin_bytes(), sigma_sample=0.02, seed=0)
    if name == "spm-bpe": return SentencePieceTokenizer(_spm_bpe())
    if name == "spm-bpe-dropout": return SentencePieceTokenizer(_spm_bpe(), alpha=0.1, seed=0)
    if name == "spm-unigram-nfkc": return SentencePieceTokenizer(train_spm_on_text(_wiki(), 700, "unigram"))
    if name == "hf-bpe": return HFByteBPE(train_hf_bpe(list(_counts()), 700))
    if name == "hf-bpe-dropout": return HFByteBPE(train_hf_bpe(list(_counts()), 700), dropout=0.1)
    if name == "sage": return SaGeTokenizer(initial_vocabulary(_wiki(), 500, "char", num_threads=1))
    if name == "sage-bytes": return SaGeTokenizer(initial_vocabulary(_wiki(), 500, "byte", num_threads=1), unit="byte")
    if name == "classic-bpe": return BPE().train(dict(_counts()[:400]), 150)
    if name == "classic-wordpiece": return WordPiece().train(dict(_counts()[:400]), 150)
    if name == "classic-unigram": return Unigram().train(dict(_counts()[:150]), 120)
    if name == "reindexed-rows": return one_row_per_subword(_make("factorizer-bytes"))
    if name == "reindexed-triplets":                           # every BPE piece its own triplet (an injective mapping: lossless)
        bpe = _make("spm-bpe")
        k = np.arange(bpe.base_vocab_size)
        return Reindexed(bpe, k, np.stack([k % 256, k // 256, np.zeros_like(k)], 1))
    raise KeyError(name)


ADAPTERS = ["chars", "factorizer", "factorizer-bytes", "factorizer-sampling", "spm-bpe", "spm-bpe-dropout", "spm-unigram-nfkc", "hf-bpe",
            "hf-bpe-dropout", "sage", "sage-bytes", "classic-bpe", "classic-wordpiece", "classic-unigram", "reindexed-rows", "reindexed-triplets"]
LOSSLESS = {"chars", "factorizer-bytes", "factorizer-sampling", "spm-bpe", "spm-bpe-dropout", "hf-bpe", "hf-bpe-dropout", "sage-bytes",
            "reindexed-rows", "reindexed-triplets"}


@pytest.fixture(scope="module", params=ADAPTERS)
def tok(request):
    return _make(request.param)


def check_encoding(tok: Tokenizer, text: str):
    "The invariants every encoding must satisfy."
    enc = tok.encode(text)
    words = [(m_start, m_start + len(w)) for w, m_start in _word_spans(text)]
    assert len(enc.ids) == len(enc.tokens) == len(enc.offsets) == len(enc.word_ids) == len(enc.attention_mask)
    assert sorted(set(enc.word_ids)) == list(range(len(words))), "every whitespace word has tokens, numbered in order"
    assert enc.word_ids == sorted(enc.word_ids)
    for tok_str, w, (s, e) in zip(enc.tokens, enc.word_ids, enc.offsets):
        ws, we = words[w]
        assert ws <= s <= e <= we, (tok_str, (s, e), (ws, we))
        surface = tok.token_text(tok_str)
        if surface is not None and tok.lossless:                # a normalizing family may show normalized text
            assert text[s:e] == surface, (tok_str, text[s:e], surface)
    for w, (ws, we) in enumerate(words):                       # a word's spans start at its start, end at its end, leave no gap
        spans = [o for o, i in zip(enc.offsets, enc.word_ids) if i == w]
        assert min(s for s, _ in spans) == ws and max(e for _, e in spans) == we
        reach = ws
        for s, e in spans:
            assert s <= reach, (text[ws:we], spans)
            reach = max(reach, e)
    return enc


def _word_spans(text):
    import re
    return [(m.group(), m.start()) for m in re.finditer(r"\S+", text)]


def normalize(text): return " ".join(text.split())


@pytest.mark.parametrize("text", TEXTS + [COVERED])
def test_offsets_and_word_ids(tok, text):
    check_encoding(tok, text)


@pytest.mark.parametrize("text", TEXTS + [COVERED])
def test_round_trip(tok, text):
    enc = tok.encode(text)
    if tok.lossless or text == COVERED: assert tok.decode(enc.ids) == normalize(text)
    else: assert isinstance(tok.decode(enc.ids), str)


@pytest.mark.parametrize("text", TEXTS + [COVERED, "tokenization"])
def test_word_pieces(tok, text):
    "One piece per token, joining back to the text (what boundary measures need)."
    if tok.samples: pytest.skip("sampling tokenizers give a new split per call")
    pieces = tok.word_pieces(text)
    assert "".join(pieces) == text.lstrip() and len(pieces) == len(tok.encode(text))


def test_declared_lossless(request):
    for name in ADAPTERS: assert _make(name).lossless == (name in LOSSLESS), name


@pytest.mark.parametrize("text", ["", " ", " \t\n\u2003 "])
def test_empty(tok, text):
    enc = tok.encode(text)
    assert len(enc) == 0 and tok.decode(enc.ids) == ""


def test_long_word(tok):
    word = ("tokenization" * 834)[:10_000]
    enc = check_encoding(tok, word)
    if tok.lossless: assert tok.decode(enc.ids) == word
    assert set(enc.word_ids) == {0}


def test_special_tokens(tok):
    plain = tok.encode("a [MASK] cat")
    assert "[MASK]" not in plain.tokens                          # only recognised when asked for
    enc = tok.encode("a [MASK] cat", add_special_tokens=True)
    assert enc.tokens[0] == "[CLS]" and enc.tokens[-1] == "[SEP]" and "[MASK]" in enc.tokens
    assert enc.ids[enc.tokens.index("[MASK]")] == tok.special_id("[MASK]")
    assert [enc.word_ids[0], enc.word_ids[-1], enc.word_ids[enc.tokens.index("[MASK]")]] == [None, None, None]
    assert tok.decode(enc.ids) == "a cat"
    assert tok.decode(enc.ids, skip_special_tokens=False) == "[CLS] a [MASK] cat [SEP]"
    assert len({tok.special_id(t) if not tok.id_shape else tuple(tok.special_id(t)) for t in SPECIAL_TOKENS}) == len(SPECIAL_TOKENS)


def test_batch_and_padding(tok):
    if tok.samples: pytest.skip("sampling tokenizers give a new split per call")
    batch = tok.encode_batch([COVERED, "the"])
    assert [(e) for e in batch] == [(tok.encode(t)) for t in [COVERED, "the"]]
    padded = pad_batch(batch, tok.special_id("[PAD]"))
    assert len({len(e) for e in padded}) == 1 and padded[1].attention_mask.count(1) == len(batch[1])
    assert tok.decode_batch([e.ids for e in batch]) == [COVERED, "the"]
    with pytest.raises(TypeError): tok.encode_batch("a text, not a list")
    with pytest.raises(TypeError): tok.encode(["a"])


@pytest.mark.parametrize("specials", [False, True])
def test_columnar_batch(tok, specials):
    "`encode_batch` gives `Encodings`: columns with one entry per token, cut into texts, whose rows are what `encode` gives text by text."
    texts = TEXTS + [COVERED, "", "a [MASK] cat", "the"]
    if isinstance(tok, HFByteBPE) and tok.samples: pytest.skip("HF's dropout cannot be seeded")
    tok.reseed(3); batch = tok.encode_batch(texts, add_special_tokens=specials)
    tok.reseed(3); each = [tok.encode(t, add_special_tokens=specials) for t in texts]
    assert isinstance(batch, Encodings) and len(batch) == len(texts)
    n = int(batch.row_splits[-1])
    assert batch.ids.shape == (n, *tok.id_shape) and batch.offsets.shape == (n, 2) and batch.word_ids.shape == batch.token_index.shape == (n,)
    assert (batch.scores is not None) == tok.has_scores and batch.lengths.tolist() == [len(e) for e in each]
    assert [(e) for e in batch] == [(e) for e in each]
    for i, e in enumerate(each):
        lo, hi = batch.row_splits[i], batch.row_splits[i + 1]
        assert batch.ids_of(i).tolist() == [list(x) if tok.id_shape else x for x in e.ids]
        assert batch.tokens(lo, hi) == e.tokens and [None if w < 0 else w for w in batch.word_ids[lo:hi].tolist()] == e.word_ids


def test_save_load(tok):
    with tempfile.TemporaryDirectory() as d:
        back = load_tokenizer(tok.save(Path(d) / "tok.file"))
        assert type(back) is type(tok) and back.vocab_size == tok.vocab_size and back.samples == tok.samples
        if not tok.samples:
            for t in TEXTS + [COVERED]: assert (back.encode(t)) == (tok.encode(t))


@settings(max_examples=40, deadline=None)
@given(text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_arbitrary_text(text):
    for name in ("factorizer-bytes", "spm-bpe", "hf-bpe", "spm-unigram-nfkc", "factorizer", "sage-bytes", "classic-bpe"):
        tok = _cached(name)
        enc = check_encoding(tok, text)
        if tok.lossless: assert tok.decode(enc.ids) == normalize(text)


@lru_cache(maxsize=None)
def _cached(name): return _make(name)


def _encode_ids(args):
    tok, text = args
    return tok.encode(text).ids


def test_pickle_and_pool(tok):
    "Every tokenizer pickles (its word cache is rebuilt) and gives the same ids in worker processes."
    import multiprocessing, pickle
    tok.encode(COVERED)                                         # fill the word cache first
    back = pickle.loads(pickle.dumps(tok))
    assert type(back) is type(tok) and back.vocab_size == tok.vocab_size
    if tok.samples: return                                      # sampled splits differ by design
    texts = TEXTS + [COVERED]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        assert pool.map(_encode_ids, [(tok, t) for t in texts]) == [tok.encode(t).ids for t in texts]


def test_word_cache_is_bounded_by_characters():
    "65,536 long words once meant gigabytes of cache; now the cache holds at most `cache_chars` characters."
    tok = _make("factorizer-bytes")
    tok.cache_chars = 50_000
    for i in range(300): tok.encode("x" * 200 + str(i))
    cache = tok._call_cache                                           # encode's own cache of single words
    assert 0 < cache.chars <= 50_000 and len(cache) < 300
    assert cache.chars == sum(cache.cost(w, t) for w, t in cache.entries.items())


def test_reseed(tok):
    "`reseed` makes a sampling tokenizer repeat its draws; it is a no-op for deterministic ones; HF's unseeded dropout says so."
    text = "tokenization with factorized subwords " * 3
    if not tok.samples:
        before = tok.encode(text).ids; tok.reseed(5); assert tok.encode(text).ids == before
        return
    if isinstance(tok, HFByteBPE):
        with pytest.raises(NotImplementedError): tok.reseed(5)
        return
    text = " ".join(text_lines("gensim:enwiki", limit=3))
    tok.reseed(5); first = [tok.encode(text).ids for _ in range(6)]
    tok.reseed(5); assert [tok.encode(text).ids for _ in range(6)] == first
    assert len({tuple(map(tuple, f)) if tok.id_shape else tuple(f) for f in first}) > 1      # and it does sample
