"Round trips, offsets, bad input and the authors' file format."
import math
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck
from factorizer_nb.core.text import BOW, EOW
from factorizer_nb.factorizer.tokenizer import Factorizer, Encoding, UNK, UNK_ID, join_tokens
from factorizer_nb.factorizer.vocab import Vocabulary, write_authors_dawg, bytes_subword, has_stray_bytes


def byte_vocab(extra=()):
    "Every byte but NUL and both word marks as subwords (stray bytes as surrogate escapes), plus `extra` pieces."
    items = [(bytes_subword(bytes([b])), (b, b, 1), -8.0) for b in range(1, 256)] + [(BOW, (0, 0, 2), -8.0), (EOW, (0, 0, 3), -8.0)]
    items += [(w, (i % 256, 2, 3), lp) for i, (w, lp) in enumerate(extra)]
    return Vocabulary(items)


EXTRA = [(BOW + "the" + EOW, -2.0), (BOW + "a", -2.5), ("ing" + EOW, -3.0), ("日本", -4.0), (BOW + "😀" + EOW, -5.0), ("s" + EOW, -1.5)]
FZ = Factorizer(byte_vocab(EXTRA))
FZ_PARTS = Factorizer(byte_vocab(EXTRA), unk="parts")


def uncovered(word):
    return "\x00" in word or any(0xD800 <= ord(c) <= 0xDFFF for c in word)


texts = st.text(st.characters(blacklist_categories=()), max_size=60) | st.lists(st.sampled_from(
    ["the", "a", "sing", "日本語", "😀", "\x00x", "\ud800", BOW, "x" + EOW, " ", "\t", "\u3000", "\x1c", "é"]), max_size=12).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_round_trip(x):
    enc = FZ.encode(x)
    expected = " ".join(UNK if uncovered(w) else w for w in x.split())
    assert FZ.decode(enc.ids) == expected


@settings(max_examples=300, deadline=None)
@given(texts)
def test_offsets_slice_the_input(x):
    enc = FZ.encode(x)
    assert len(enc.ids) == len(enc.tokens) == len(enc.scores) == len(enc.offsets) == len(enc.word_ids)
    words = x.split()
    for w in range(len(words)):
        toks = [t for t, i in zip(enc.tokens, enc.word_ids) if i == w]
        spans = [o for o, i in zip(enc.offsets, enc.word_ids) if i == w]
        if toks == [UNK]:
            assert x[slice(*spans[0])] == words[w]
            continue
        assert join_tokens(toks) == BOW + words[w] + EOW
        assert x[spans[0][0]:spans[-1][1]] == words[w]
        assert not any(t.startswith(BOW) for t in toks[1:]) and not any(t.endswith(EOW) for t in toks[:-1])   # marks only at the ends
        for i, (tok, (s, e)) in enumerate(zip(toks, spans)):
            text = tok.removeprefix(BOW) if i == 0 else tok
            text = text.removesuffix(EOW) if i == len(toks) - 1 else text
            if not has_stray_bytes(tok):   # token on character boundaries
                assert x[s:e] == text


@settings(max_examples=200, deadline=None)
@given(texts)
def test_unk_parts_keeps_known_parts(x):
    enc = FZ_PARTS.encode(x)
    for w, word in enumerate(x.split()):
        toks = [t for t, i in zip(enc.tokens, enc.word_ids) if i == w]
        if not uncovered(word): assert UNK not in toks
        elif "\x00" in word and not any(0xD800 <= ord(c) <= 0xDFFF for c in word):
            assert join_tokens([t for t in toks if t != UNK])[len(BOW):-len(EOW)] == word.replace("\x00", "")


@pytest.mark.parametrize("fz", [FZ, FZ_PARTS], ids=["unk=word", "unk=parts"])
@pytest.mark.parametrize("text,n_words", [("", 0), ("   ", 0), ("\t\n\r\u2028", 0), ("😀", 1), ("日本語 text", 2),
                                          ("bell\x07 x", 2), ("e\u0301", 1), ("x" * 10_000, 1), ("\ud800", 1)])
def test_odd_input_has_a_defined_result(fz, text, n_words):
    enc = fz.encode(text)
    assert len(set(enc.word_ids)) == n_words
    assert fz.decode(enc.ids) == " ".join(UNK if uncovered(w) else w for w in text.split())


@pytest.mark.parametrize("bad", [None, 3, b"bytes", ["a", "b"], ("a",)])
def test_non_str_input_is_a_type_error(bad):
    with pytest.raises(TypeError, match="encode"):
        FZ.encode(bad)


def test_encode_batch_and_call():
    assert FZ.encode_batch(["the", "a"]) == [FZ("the"), FZ("a")]
    with pytest.raises(TypeError): FZ.encode_batch("the")


def test_unk_word_scores_and_ids():
    enc = FZ.encode("a\x00b")
    assert enc.ids == [UNK_ID] and enc.scores == [-math.inf] and enc.offsets == [(0, 3)]


def test_cache_does_not_change_results():
    fresh = Factorizer(FZ.vocab, cache_chars=0)
    text = "the thing sings 日本 " * 3
    assert FZ.encode(text) == fresh.encode(text)


def test_sampling_is_reproducible_per_seed():
    a = Factorizer(FZ.vocab, alpha_split=0.0, sigma_sample=2.0, seed=11)
    b = Factorizer(FZ.vocab, alpha_split=0.0, sigma_sample=2.0, seed=11)
    text = "the singing thing 日本"
    assert [a.encode(text) for _ in range(5)] == [b.encode(text) for _ in range(5)]
    assert len({tuple(a.encode(text).tokens) for _ in range(30)}) > 1


def test_authors_format_gives_the_same_tokens(tmp_path):
    items = list(FZ.vocab.items())
    path = write_authors_dawg(items + [(BOW + "the" + EOW, (9, 9, 9), -20.0)], tmp_path / "english.dawg")
    theirs = Factorizer(Vocabulary.load(path))
    ours = Factorizer(FZ.vocab.save(tmp_path / "ours.vocab"))
    text = "the thing sings 日本 😀 Ωmega"
    assert theirs.encode(text).tokens == ours.encode(text).tokens == FZ.encode(text).tokens
    assert theirs.encode(text).ids == FZ.encode(text).ids


@pytest.mark.parametrize("content", [b"", b"\x00" * 64, b"FACTORIZER-NB-VOCAB\n{not json\n", b"FACTORIZER-NB-VOCAB\n{\"format_version\": 99}\n"])
def test_corrupt_vocabulary_files_give_clear_errors(tmp_path, content):
    p = tmp_path / "bad.vocab"
    p.write_bytes(content)
    with pytest.raises(ValueError):
        Vocabulary.load(p)
