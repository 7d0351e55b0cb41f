"""The loader of eval.loader on tokenizers trained here, in every format: they load, round-trip hostile words with offsets
on the word, give the built-in families' numbers where they are the same tokenizer, and fail clearly on bad input."""
import base64, math
from pathlib import Path
import pytest
from factorizer_nb.core.protocol import load_tokenizer
from factorizer_nb.eval.loader import load_any, sniff, round_trip, ForeignTokenizer, FORMATS

WORDS = ("the quick brown fox jumps over the lazy dog unhappiness happily running runner tokenization "
         "Zürich naïve café résumé élan 東京 Москва мир 123 4567 don't e-mail").split()
COUNTS = [(w, 100 - k) for k, w in enumerate(WORDS)] + [(w + "s", 3) for w in WORDS[:12]]
HOSTILE = ["", "a", "x" * 3000, "\u0301", "e\u0301", "\x00\x01\x7f", "\u200b\u200d", "🙂👩‍👩‍👧", "\ufeffBOM", "\ud800",
           "ﬁ", "İstanbul", "\U0010ffff", "a\u0000b", "日本語テキスト", "١٢٣"]


def hf_bpe(vocab_size=300):
    from factorizer_nb.baselines.adapters import train_hf_bpe
    return train_hf_bpe(COUNTS, vocab_size)


def hf_wordpiece():
    "An uncased WordPiece (BERT's normalizer: lower case, accents stripped)."
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers, decoders
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator([" ".join(WORDS)] * 5, trainers.WordPieceTrainer(vocab_size=200, special_tokens=["[UNK]", "[CLS]", "[SEP]"],
                                                                               show_progress=False))
    return tok


def hf_unigram():
    "A Metaspace Unigram (not byte-level)."
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers, decoders
    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator([" ".join(WORDS)] * 5, trainers.UnigramTrainer(vocab_size=120, unk_token="<unk>", special_tokens=["<unk>"],
                                                                             show_progress=False))
    return tok


def spm_model(tmp_path, model_type="unigram", dummy=True):
    from factorizer_nb.baselines.adapters import train_sentencepiece
    sp = train_sentencepiece(COUNTS, 400, model_type, markers=False, num_threads=1)
    from sentencepiece import sentencepiece_model_pb2 as pb
    m = pb.ModelProto(); m.ParseFromString(sp.serialized_model_proto())
    m.normalizer_spec.add_dummy_prefix = dummy
    path = tmp_path / f"{model_type}_{dummy}.model"; path.write_bytes(m.SerializeToString())
    return path


def tiktoken_file(tmp_path):
    "A tiktoken ranks file from a trained byte-level BPE: each token's bytes, ranked by its id (the merge order)."
    from tokenizers import decoders
    tok = hf_bpe()
    byte_of = {c: b for b, c in zip(range(256), _bytes_to_unicode())}
    lines = []
    for piece, i in sorted(tok.get_vocab().items(), key=lambda kv: kv[1]):
        lines.append(f"{base64.b64encode(bytes(byte_of[c] for c in piece)).decode()} {i}")
    path = tmp_path / "bpe.tiktoken"; path.write_text("\n".join(lines) + "\n")
    return path


def _bytes_to_unicode():
    "GPT-2's printable picture of each byte value 0..255 (what HF's byte-level alphabet is made of)."
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs: bs.append(b); cs.append(256 + n); n += 1
    pic = dict(zip(bs, cs))
    return [chr(pic[b]) for b in range(256)]


def pieces_fn(word):
    "A slow Python tokenizer: chunks of three characters."
    if "☠" in word: raise RuntimeError("cannot split a skull")
    return [word[k:k + 3] for k in range(0, len(word), 3)]


@pytest.fixture(scope="module")
def every_format(tmp_path_factory):
    "One tokenizer in each format, trained here, as a path (or callable) and its format."
    d = tmp_path_factory.mktemp("formats")
    out = {}
    for name, tok in (("bpe", hf_bpe()), ("wordpiece", hf_wordpiece()), ("unigram", hf_unigram())):
        tok.save(str(d / f"{name}.json")); out[f"tokenizer.json:{name}"] = d / f"{name}.json"
    from transformers import PreTrainedTokenizerFast
    fast = PreTrainedTokenizerFast(tokenizer_object=hf_wordpiece(), unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]")
    fast.save_pretrained(str(d / "hf_folder")); out["transformers"] = d / "hf_folder"
    out["sentencepiece:unigram"] = spm_model(d)
    out["sentencepiece:bpe-no-prefix"] = spm_model(d, "bpe", dummy=False)
    out["tiktoken"] = tiktoken_file(d)
    from factorizer_nb.factorizer.pretrained import resolve_vocab_file
    out["factorizer"] = resolve_vocab_file("gd")
    out["callable"] = pieces_fn
    return out


def test_every_format_sniffed_and_loaded(every_format):
    for key, src in every_format.items():
        fmt = key.split(":")[0]
        assert sniff(src) == fmt, key
        tok = load_any(src)
        tok = tok.fit(WORDS) if isinstance(tok, ForeignTokenizer) else tok
        assert tok.report.format == fmt and len(tok.report.sha256) == 64
        enc = tok.encode("the quick Zürich")
        assert len(enc) >= 3 and set(enc.word_ids) == {0, 1, 2}
        if not callable(src): assert type(load_tokenizer(src)).__name__ == type(tok).__name__   # the protocol's loader too
    assert sniff(Path(__file__)) is None


@pytest.mark.parametrize("key", ["tokenizer.json:bpe", "tokenizer.json:wordpiece", "tokenizer.json:unigram", "transformers",
                                 "sentencepiece:unigram", "sentencepiece:bpe-no-prefix", "tiktoken", "factorizer", "callable"])
def test_hostile_words(every_format, key):
    "Every word gives tokens whose offsets lie on the word, in order; lossless formats give the word back."
    tok = load_any(every_format[key])
    if isinstance(tok, ForeignTokenizer): tok.fit(HOSTILE + WORDS)
    for w in HOSTILE:
        enc = tok.encode(w)
        if not w.split(): assert len(enc) == 0; continue
        offs = enc.offsets
        assert all(0 <= a <= b <= len(w) for a, b in offs), (key, w, offs)
        assert [a for a, _ in offs] == sorted(a for a, _ in offs), (key, w, offs)
        assert offs[-1][1] == len(w)
    words = [w for w in WORDS + HOSTILE if w.split() == [w] and w.isprintable() and "\ud800" not in w]
    share = round_trip(tok, words)
    assert 0 <= share <= 1 and tok.report.round_trip_share == share
    if key in ("tokenizer.json:bpe", "tiktoken", "sentencepiece:unigram"): assert share == 1.0, key
    if key == "tokenizer.json:wordpiece": assert share < 1.0                 # uncased: lower case, accents dropped


def test_the_leading_space_as_in_running_text(every_format):
    "A byte-level BPE sees a word after a space: its pieces of 'quick' are those of ' quick' in running text."
    tok = load_any(every_format["tokenizer.json:bpe"])
    from tokenizers import Tokenizer
    hf = Tokenizer.from_file(str(every_format["tokenizer.json:bpe"]))
    assert tok.encode("quick").tokens == hf.encode("the quick").tokens[-len(tok.encode("quick")):]
    tk = load_any(every_format["tiktoken"])
    assert tk.encode("quick").ids == tk.backend.enc.encode_ordinary("the quick")[-len(tk.encode("quick")):]
    assert tok.report.context == "' ' + word" and load_any(every_format["sentencepiece:unigram"]).report.context == "word"


def test_tiktoken_agrees_with_its_bpe(every_format):
    "The tiktoken encoding made from a BPE's ranks splits the words as that BPE does (GPT-2's pattern is HF's byte-level one)."
    from factorizer_nb.baselines.adapters import HFByteBPE
    tk, ref = load_any(every_format["tiktoken"]), HFByteBPE(hf_bpe())
    same = sum(tk.encode(w).ids == ref.encode(w).ids for w in WORDS)
    assert same >= 0.9 * len(WORDS)


def test_consistency_with_the_built_in_families(tmp_path):
    "The project's BPE saved as tokenizer.json and Unigram LM as a sentencepiece .model give the built-in numbers exactly."
    from factorizer_nb.baselines.adapters import HFByteBPE, SentencePieceTokenizer
    from factorizer_nb.downstream.intrinsic import intrinsic_row
    gold = [("unhappiness", {2, 7}), ("running", {3}), ("tokenization", {5})]
    words = WORDS * 3 + ["unhappiness", "tokenizations", "Zürichs"]
    bpe = HFByteBPE(hf_bpe(), name="BPE")
    bpe.tok.save(str(tmp_path / "tokenizer.json"))
    uni = SentencePieceTokenizer.from_counts(COUNTS, 400, "unigram", name="Unigram LM")
    (tmp_path / "uni.model").write_bytes(uni.sp.serialized_model_proto())
    for built_in, path in ((bpe, tmp_path / "tokenizer.json"), (uni, tmp_path / "uni.model")):
        loaded = load_any(path)
        assert isinstance(loaded, ForeignTokenizer)
        a, b = intrinsic_row(built_in, words, gold=gold), intrinsic_row(loaded, words, gold=gold)
        assert a == b, (built_in.name, a, b)
        assert [built_in.word_pieces(w) for w in words] == [loaded.word_pieces(w) for w in words]


def test_special_tokens_left_out(every_format):
    "A word that is a special token of the tokenizer: the special id is dropped and counted, not measured."
    tok = load_any(every_format["transformers"])
    enc = tok.encode("[CLS] the")
    special = tok.backend.special
    assert special and not set(enc.ids) & special and tok.report.special_dropped >= 1 and tok.report.special_ids == len(special)


def test_a_word_it_raises_on_is_unknown(every_format):
    "A callable that raises on a word: that word is one [UNK], counted, and the rest go on."
    tok = load_any(pieces_fn).fit(WORDS)
    enc = tok.encode("the ☠ fox")
    assert enc.tokens[1] == "[UNK]" and enc.ids[1] == tok.special_id("[UNK]") and tok.report.failures == 1
    assert tok.encode("zzzz").tokens == ["[UNK]", "[UNK]"] and tok.report.unseen == 2     # pieces it never emitted when fitted


def test_unknown_format_names_the_known_ones(tmp_path):
    bad = tmp_path / "weights.bin"; bad.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ValueError) as e: load_any(bad)
    assert all(f in str(e.value) for f in FORMATS)
    (tmp_path / "x.json").write_text('{"hello": 1}')
    with pytest.raises(ValueError, match="Known formats"): load_tokenizer(tmp_path / "x.json")
    with pytest.raises(ValueError, match="Known formats"): load_any(tmp_path / "x.json", format="pickle")
    with pytest.raises(ValueError, match="Known formats"): load_any(tmp_path)                       # an empty folder
    with pytest.raises(FileNotFoundError): load_any(tmp_path / "nothing.model")
    with pytest.raises(RuntimeError, match="fit"): load_any(pieces_fn).encode("word")
    bad_ranks = tmp_path / "b.tiktoken"; bad_ranks.write_text("QQ== 0\nnot base64!! x\n")
    with pytest.raises(ValueError, match="line 2"): load_any(bad_ranks, format="tiktoken")


def test_saved_and_loaded_again(every_format, tmp_path):
    "A foreign tokenizer saves as the project's JSON and loads back the same (what the parser's fingerprint needs)."
    for key in ("tokenizer.json:unigram", "sentencepiece:bpe-no-prefix", "tiktoken"):
        tok = load_any(every_format[key])
        back = load_tokenizer(tok.save(tmp_path / f"{key.replace(':', '_')}.json"))
        assert [back.encode(w).ids for w in WORDS] == [tok.encode(w).ids for w in WORDS], key


def test_the_authors_dawg(tmp_path):
    "The authors' DAWG has no mark of its own: the loader's fallback reads it, as the protocol's loader does."
    from factorizer_nb.factorizer.pretrained import resolve_vocab_file
    from factorizer_nb.factorizer.vocab import Vocabulary, write_authors_dawg
    from factorizer_nb.factorizer.tokenizer import Factorizer
    ours = Vocabulary.load(resolve_vocab_file("gd"))
    path = write_authors_dawg(list(ours.items())[:3000], tmp_path / "theirs.dawg")
    assert sniff(path) is None
    tok = load_any(path)
    assert isinstance(tok, Factorizer) and tok.report.format == "factorizer" and len(tok.encode("agus an").ids) >= 2
    assert load_tokenizer(path).encode("agus an").ids == tok.encode("agus an").ids


@pytest.mark.parametrize("key", ["tokenizer.json:wordpiece", "transformers"])
def test_unknown_token_is_a_piece(every_format, key):
    "The tokenizer's own [UNK] (<unk>) is a piece like any other, counted among the pieces, never dropped as special."
    tok = load_any(every_format[key])
    assert tok.backend.unk is not None and tok.backend.unk not in tok.backend.special
    enc = tok.encode("the ☃☃")                                  # a snowman no vocabulary here has
    assert len(enc) >= 2 and tok.backend.unk in enc.ids[1:], (key, enc.tokens)
    assert tok.report.unk_pieces >= 1 and tok.report.pieces >= tok.report.unk_pieces and tok.report.special_dropped == 0
    spm = load_any(every_format["sentencepiece:unigram"]).backend       # byte fallback here: <unk> is never drawn, yet
    assert spm.unk == spm.inner.sp.unk_id() and spm.unk not in spm.special  # it is no special token either


def test_corrupt_and_offline_get_one_line(every_format, tmp_path, monkeypatch):
    "A truncated sentencepiece model names sentencepiece and its error; a tiktoken name not shipped offline says so."
    data = Path(every_format["sentencepiece:unigram"]).read_bytes()
    cut = tmp_path / "cut.model"; cut.write_bytes(data[: len(data) // 3])
    with pytest.raises(ValueError) as e: load_any(cut)
    assert "named as a sentencepiece file" in str(e.value) and "\n" not in str(e.value) and "DAWG" not in str(e.value)
    import tiktoken
    missing = [n for n in tiktoken.list_encoding_names() if not n.endswith("_offline")
               and f"{n}_offline" not in tiktoken.list_encoding_names()]
    if missing:                                       # an encoding tiktoken would download
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "no_cache"))      # nothing cached to fall back on
        with pytest.raises(ValueError, match="not available offline"): load_any(missing[0])


def test_text_pieces_as_running_text(every_format):
    "A whole text through the tokenizer itself, spans in the text; a callable splits words only and says so with None."
    from factorizer_nb.downstream.intrinsic import context_units
    text = "the lazy dog 東京"
    for key, src in every_format.items():
        tok = load_any(src)
        if not isinstance(tok, ForeignTokenizer): continue               # the families encode whitespace words themselves
        if key == "callable": tok.fit(WORDS); assert tok.text_pieces(text) is None; continue
        got = tok.text_pieces(text)
        assert got and all(0 <= a <= b <= len(text) for *_, a, b in got), (key, got)
        assert not any(i in tok.backend.special for _, i, *_ in got), key
    first = lambda key, t: load_any(every_format[key]).text_pieces(t)[0][0]
    assert not first("tiktoken", "the dog").startswith(" ")              # the text's first word has no space before it
    assert not first("sentencepiece:bpe-no-prefix", "the dog").startswith("▁")
    assert first("sentencepiece:unigram", "the dog").startswith("▁")        # its dummy prefix, once per text
    spm = load_any(every_format["sentencepiece:unigram"])
    words = ["東京", "の", "犬"]
    alone = sum(len(spm.encode_word(w)) for w in words)                     # each with its own ▁
    keys, n, whole, how, _ = context_units(spm, [("東京の犬", [(0, 2), (2, 3), (3, 4)])])
    assert how == "sentences" and n.sum() == len(spm.text_pieces("東京の犬")) and n.sum() < alone, (n, alone)
    *_, how, _ = context_units(load_any(every_format["callable"]).fit(WORDS), [("the dog", [(0, 3), (4, 7)])])
    assert how == "sentences, by whitespace word"
