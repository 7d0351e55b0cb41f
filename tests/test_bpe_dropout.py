"""Seeded BPE-dropout (baselines.adapters.bpe_dropout) against sentencepiece's own BPE: the same splits without dropout, the same split
distribution with it, and the same draws in two separate processes (which sentencepiece's seeded sampling does not give)."""
import collections, json
from functools import lru_cache
import pytest
from fixtures import needs_data, run_python
from factorizer_nb.baselines.adapters import SentencePieceTokenizer, train_sentencepiece
from factorizer_nb.core.corpora import word_counts

DROPOUT = 0.1
WORDS = ["internationalization", "tokenization", "understanding", "the", "Copenhagen", "naïve"]


@lru_cache(maxsize=None)
def _bpe() -> SentencePieceTokenizer:
    return SentencePieceTokenizer(train_sentencepiece(word_counts("wordfreq:en", top_n=3000), 800, "bpe", markers=False))


@needs_data
def test_no_dropout_is_sentencepiece_on_a_treebank():
    "With dropout that never fires, our merges give sentencepiece's pieces, ids and spans for every word form of en_ewt dev."
    from factorizer_nb.downstream.ud_data import read_treebank, syntactic_words
    plain = _bpe()
    ours = SentencePieceTokenizer(plain.sp, alpha=1e-12, seed=0)
    forms = {w["form"] for s in read_treebank("ud/en_ewt-ud-dev.conllu.xz") for w in syntactic_words(s)}
    assert len(forms) > 3000
    differ = [f for f in sorted(forms) if ours.dropout_word(f) != plain.encode_word(f)]
    assert not differ, f"{len(differ)} forms split differently, e.g. {differ[:5]}"


def test_same_seed_same_splits_in_two_processes():
    "Two processes with the same seed draw the same BPE-dropout splits (the run-to-run reproducibility sentencepiece's sampling lacks)."
    model = _bpe().sp.serialized_model_proto().hex()
    code = f"""
        import json
        from factorizer_nb.baselines.adapters import SentencePieceTokenizer
        t = SentencePieceTokenizer(bytes.fromhex("{model}"), alpha={DROPOUT}, seed=7)
        print(json.dumps([t.encode(" ".join({WORDS!r})).tokens for _ in range(30)]))
    """
    a, b = (json.loads(run_python(code)) for _ in range(2))
    assert a == b
    assert len({tuple(x) for x in a}) > 1                       # and it does sample


def test_sentencepiece_seeded_sampling_differs_between_processes():
    "Why we sample ourselves: sentencepiece's `set_random_generator_seed` does not make two processes draw alike (if this starts failing, sentencepiece has fixed it)."
    model = _bpe().sp.serialized_model_proto().hex()
    code = f"""
        import json, sentencepiece as spm
        sp = spm.SentencePieceProcessor(model_proto=bytes.fromhex("{model}"))
        spm.set_random_generator_seed(7)
        print(json.dumps([sp.encode("internationalization", out_type=str, enable_sampling=True, alpha={DROPOUT}, nbest_size=-1)
                          for _ in range(200)]))
    """
    runs = [json.loads(run_python(code)) for _ in range(3)]
    assert runs[0] != runs[1] or runs[1] != runs[2]


@pytest.mark.parametrize("word", WORDS[:4])
def test_split_distribution_matches_sentencepiece(word):
    "Our BPE-dropout splits of `word` have sentencepiece's distribution: a two-sample chi-square test over the splits seen 40+ times."
    from scipy.stats import chi2
    n, min_count = 4000, 40
    plain = _bpe()
    ours = SentencePieceTokenizer(plain.sp, alpha=DROPOUT, seed=3)
    mine = collections.Counter(tuple(t[0] for t in ours.dropout_word(word)) for _ in range(n))
    theirs = collections.Counter(tuple(plain.sp.encode(word, out_type=str, enable_sampling=True, alpha=DROPOUT, nbest_size=-1)) for _ in range(n))
    keys = [k for k in set(mine) | set(theirs) if mine[k] + theirs[k] >= min_count]
    a = [mine[k] for k in keys] + [n - sum(mine[k] for k in keys)]          # the rare splits pooled
    b = [theirs[k] for k in keys] + [n - sum(theirs[k] for k in keys)]
    p_value = chi2.sf(sum((x - y) ** 2 / (x + y) for x, y in zip(a, b) if x + y), len(a) - 1)
    # measured: dropout 0.12 against sentencepiece's 0.1 gives p ~ 1e-10 on the long words; equal rates give p ~ 0.3
    assert p_value > 1e-4, f"p = {p_value:.2g}: ours {mine.most_common(3)}, sentencepiece {theirs.most_common(3)}"
