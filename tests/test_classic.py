"""The classic algorithms: piece-level round trips, the tokenizer protocol (offsets, decode, odd inputs, long words,
save -> load) for each of them, and BPE against HF tokenizers."""
import json
import re
import time

import pytest
from hypothesis import given, settings, strategies as st

from factorizer_nb.bpe_vs_unigram.classic import BPE, WordPiece, Unigram, END_OF_WORD, UNK
from factorizer_nb.core.corpora import word_counts
from factorizer_nb.core.protocol import load_tokenizer
from fixtures import fields

CORPUS = "the quick brown fox jumps over the lazy dog and the dog sleeps while the fox runs to the box".split() * 3
ALPHABET = "".join(sorted(set("".join(CORPUS))))


def trained():
    return [BPE().train(CORPUS, 40), WordPiece().train(CORPUS, 60), Unigram().train({w: CORPUS.count(w) for w in set(CORPUS)}, 45, em_iterations=1),
            BPE(attach_eow=True).train(CORPUS, 40)]


MODELS = trained()
IDS = ["bpe", "wordpiece", "unigram", "bpe-attached"]
ODD = ["", "   ", " \t\n\u2003 ", "the fox", "😀 emoji 👩‍👩‍👧", "unseen wörds ünïcode", "\t tabs\nand  lines ", "a</w>b", "##x", "▁the", "[UNK] [MASK]"]


def expected_text(model, text, unk=f" {UNK} "):
    "What decode must give back: the text up to whitespace, with `unk` for what the model cannot split (a word, or a character)."
    if isinstance(model, WordPiece): return " ".join(" ".join(unk if model.split_word(w) == [UNK] else w for w in text.split()).split())
    return " ".join(re.sub(f"[^{re.escape(ALPHABET)}\\s]", unk, text).split())


def check_encoding(model, text):
    "Offsets inside the word, text[s:e] == token_text, word ids in order, each word covered from start to end without a gap."
    enc = model.encode(text)
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    assert sorted(set(enc.word_ids)) == list(range(len(words))) and enc.word_ids == sorted(enc.word_ids)
    for tok, w, (s, e) in zip(enc.tokens, enc.word_ids, enc.offsets):
        assert words[w][0] <= s <= e <= words[w][1]
        surface = model.token_text(tok)
        if surface is not None: assert text[s:e] == surface, (tok, text[s:e], surface)
    for w, (ws, we) in enumerate(words):
        spans = [o for o, i in zip(enc.offsets, enc.word_ids) if i == w]
        assert spans[0][0] == ws and max(e for _, e in spans) == we
        assert all(s == prev_e for (_, prev_e), (s, _) in zip(spans, spans[1:])), spans
    return enc


# --- pieces -----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("model", MODELS, ids=IDS)
@pytest.mark.parametrize("text", ODD)
def test_piece_round_trip(model, text):
    pieces = model.split(text)
    assert len(pieces) == len(text.split())
    expected = " ".join(w if not (isinstance(model, WordPiece) and model.split_word(w) == [UNK]) else UNK for w in text.split())
    assert model.join(pieces) == expected


@pytest.mark.parametrize("model", [MODELS[0], MODELS[2], MODELS[3]], ids=["bpe", "unigram", "bpe-attached"])
@settings(max_examples=150, deadline=None)
@given(st.text(max_size=40))
def test_piece_round_trip_arbitrary_text(model, text):
    assert model.join(model.split(text)) == " ".join(text.split())


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_non_str_is_a_type_error(model):
    with pytest.raises(TypeError): model.split(b"bytes")
    with pytest.raises(TypeError): model.encode(b"bytes")


# --- the tokenizer protocol -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_declared_not_lossless_and_sizes(model):
    assert model.lossless is False                   # unseen characters become [UNK]
    n = len(model.pieces) * (2 if isinstance(model, Unigram) else 1)
    assert model.base_vocab_size == n and model.special_id(UNK) == n


@pytest.mark.parametrize("model", MODELS, ids=IDS)
@pytest.mark.parametrize("text", ODD + [" ".join(CORPUS[:12])])
def test_offsets_and_decode(model, text):
    enc = check_encoding(model, text)
    assert model.decode(enc.ids, skip_special_tokens=False) == expected_text(model, text)
    assert model.decode(enc.ids) == expected_text(model, text, unk="")       # [UNK] dropped


@pytest.mark.parametrize("model", MODELS, ids=IDS)
@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(ALPHABET, min_size=1, max_size=12), max_size=8), st.sampled_from([" ", "  ", "\t", "\n "]))
def test_decode_round_trip_on_trained_characters(model, words, sep):
    text = sep.join(words)
    enc = check_encoding(model, text)
    if isinstance(model, WordPiece):                 # a word without a greedy split is one [UNK]
        assert model.decode(enc.ids, skip_special_tokens=False) == expected_text(model, text)
    else:
        assert UNK not in enc.tokens and model.decode(enc.ids) == " ".join(text.split())


@pytest.mark.parametrize("model", MODELS, ids=IDS)
@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=30))
def test_arbitrary_text(model, text):
    enc = check_encoding(model, text)
    assert model.decode(enc.ids, skip_special_tokens=False) == expected_text(model, text)


@pytest.mark.parametrize("model", MODELS, ids=IDS)
@pytest.mark.parametrize("text", ["", " ", " \t\n\u2003 "])
def test_empty_and_whitespace(model, text):
    enc = model.encode(text)
    assert len(enc) == 0 and model.decode(enc.ids) == ""


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_unseen_emoji_is_unk(model):
    enc = model.encode("🙂")
    assert UNK in enc.tokens and enc.ids[enc.tokens.index(UNK)] == model.special_id(UNK)
    assert enc.offsets[enc.tokens.index(UNK)] == (0, 1)
    assert model.decode(model.encode("the 🙂 fox").ids) == "the fox"


@pytest.mark.parametrize("model", MODELS, ids=IDS)
@pytest.mark.parametrize("word", ["b" + "ox" * 4_999 + "o", ("thequickbrownfox" * 625)[:10_000], "fox" + "🙂" * 5_000 + "box" * 1_666])
def test_long_word_is_fast(model, word):
    assert len(word) >= 10_000
    start = time.perf_counter()
    enc = check_encoding(model, word)
    assert time.perf_counter() - start < 5, "encoding a 10,000-character word must not be quadratic in its length"
    assert set(enc.word_ids) == {0}
    assert model.decode(enc.ids, skip_special_tokens=False) == expected_text(model, word)


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_special_tokens(model):
    enc = model.encode("the [MASK] fox", add_special_tokens=True)
    assert enc.tokens[0] == "[CLS]" and enc.tokens[-1] == "[SEP]" and "[MASK]" in enc.tokens
    assert model.decode(enc.ids) == "the fox"
    assert model.decode(enc.ids, skip_special_tokens=False) == "[CLS] the [MASK] fox [SEP]"


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_save_load_gives_identical_encodings(model, tmp_path):
    back = load_tokenizer(model.save(tmp_path / "tok.json"))
    assert type(back) is type(model) and back.pieces == model.pieces and back.vocab_size == model.vocab_size
    assert back.config() == model.config()
    for text in ODD + [" ".join(CORPUS), "thequickbrownfox" * 50]:
        assert fields(back.encode(text)) == fields(model.encode(text))
    assert back.split(" ".join(CORPUS)) == model.split(" ".join(CORPUS))


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_bad_ids_are_refused(model):
    with pytest.raises(ValueError): model.decode_ids([model.base_vocab_size])
    with pytest.raises(ValueError): model.decode_ids([-1])


@pytest.mark.parametrize("make", [lambda: BPE(), lambda: WordPiece(), lambda: Unigram()], ids=["bpe", "wordpiece", "unigram"])
def test_retraining_forgets_cached_encodings(make):
    tok = make().train(["ab"] * 3, 50)
    assert UNK not in tok.encode("ab").tokens
    tok.train(["xy"] * 3, 50)
    assert UNK in tok.encode("ab").tokens and UNK not in tok.encode("xy").tokens


def test_wordpiece_id_scheme():
    wp = WordPiece(["net", "##work", "##s", "n"])
    assert wp.pieces == ["##s", "##work", "n", "net"]
    assert [(t, i) for t, i, *_ in wp.encode_word("networks")] == [("net", 3), ("##work", 1), ("##s", 0)]


def test_unigram_id_scheme():
    uni = Unigram({"a": -1.0, "b": -1.0, "ab": -1.5})
    assert uni.pieces == ["a", "ab", "b"]
    enc = uni.encode("ab ba")
    assert enc.tokens == ["▁ab", "▁b", "a"] and enc.ids == [2 * 1 + 1, 2 * 2 + 1, 2 * 0]
    assert uni.decode_ids(enc.ids) == " ab ba"


# --- against HF tokenizers --------------------------------------------------------------------------------------------

def test_bpe_merges_agree_with_hf_tokenizers_until_the_first_tie():
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    counts = dict(word_counts("wordfreq:en", top_n=300))
    counts = {w: max(1, c // 10_000) for w, c in counts.items() if w.isalpha() and w.isascii()}
    n = 60
    ours = BPE(attach_eow=True).train(counts, n)      # HF glues </w> to the last character from the start
    # a merge chosen among equally frequent pairs may legitimately differ: compare up to the first tie
    ties = [i for i in range(n) if ours.merge_counts.count(ours.merge_counts[i]) > 1]
    upto = ties[0] if ties else n
    tok = Tokenizer(models.BPE(end_of_word_suffix=END_OF_WORD))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    alphabet = {ch for w in counts for ch in w[:-1]} | {w[-1] + END_OF_WORD for w in counts}
    trainer = trainers.BpeTrainer(vocab_size=len(alphabet) + n, end_of_word_suffix=END_OF_WORD, show_progress=False)
    tok.train_from_iterator(((w + " ") * c for w, c in counts.items()), trainer)
    hf_merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in json.loads(tok.to_str())["model"]["merges"]]
    assert upto >= 5, "the comparison needs a few tie-free merges"
    assert [tuple(m) for m in ours.merges[:upto]] == hf_merges[:upto]
