"The classic algorithms: round trips over implementations and odd inputs, and BPE against HF tokenizers."
import json
import pytest
from hypothesis import given, settings, strategies as st
from factorizer_nb.bpe_vs_unigram.classic import BPE, WordPiece, Unigram, EOW, WP_UNK
from factorizer_nb.core.data import word_counts

CORPUS = "the quick brown fox jumps over the lazy dog and the dog sleeps while the fox runs to the box".split() * 3


def trained():
    return [BPE().train(CORPUS, 40), WordPiece().train(CORPUS, 60), Unigram().train({w: CORPUS.count(w) for w in set(CORPUS)}, 45, em_iterations=1)]


MODELS = trained()
IDS = ["bpe", "wordpiece", "unigram"]


@pytest.mark.parametrize("model", MODELS, ids=IDS)
@pytest.mark.parametrize("text", ["", "   ", "the fox", "😀 emoji 👩‍👩‍👧", "unseen wörds ünïcode", "\t tabs\nand  lines ", "a</w>b", "##x"])
def test_round_trip(model, text):
    pieces = model.encode(text)
    assert len(pieces) == len(text.split())
    expected = " ".join(w if not (isinstance(model, WordPiece) and model.encode_word(w) == [WP_UNK]) else WP_UNK for w in text.split())
    assert model.decode(pieces) == expected


@pytest.mark.parametrize("model", MODELS[:1] + MODELS[2:], ids=["bpe", "unigram"])
@settings(max_examples=150, deadline=None)
@given(st.text(max_size=40))
def test_round_trip_arbitrary_text(model, text):
    assert model.decode(model.encode(text)) == " ".join(text.split())


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_non_str_is_a_type_error(model):
    with pytest.raises(TypeError): model.encode(b"bytes")


def test_bpe_merges_agree_with_hf_tokenizers_until_the_first_tie():
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    counts = dict(word_counts("wordfreq:en", top_n=300))
    counts = {w: max(1, c // 10_000) for w, c in counts.items() if w.isalpha() and w.isascii()}
    n = 60
    ours = BPE(attach_eow=True).train(counts, n)      # HF glues </w> to the last character from the start
    # a merge chosen among equally frequent pairs may legitimately differ: compare up to the first tie
    ties = [i for i in range(n) if ours.merge_counts.count(ours.merge_counts[i]) > 1]
    upto = ties[0] if ties else n
    tok = Tokenizer(models.BPE(end_of_word_suffix=EOW))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    alphabet = {ch for w in counts for ch in w[:-1]} | {w[-1] + EOW for w in counts}
    trainer = trainers.BpeTrainer(vocab_size=len(alphabet) + n, end_of_word_suffix=EOW, show_progress=False)
    tok.train_from_iterator(((w + " ") * c for w, c in counts.items()), trainer)
    hf_merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in json.loads(tok.to_str())["model"]["merges"]]
    assert upto >= 5, "the comparison needs a few tie-free merges"
    assert [tuple(m) for m in ours.merges[:upto]] == hf_merges[:upto]
