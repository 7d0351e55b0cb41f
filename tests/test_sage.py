"""SaGe: neighbourhood deltas against full rescoring, determinism, resume, the byte mode against whole-line greedy matching,
SaGeTokenizer under the tokenizer protocol, the paper notebook."""
import copy, json, re
import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings, strategies as st, HealthCheck
from fixtures import ROOT, needs_data
from factorizer_nb.core.claims import data_file
from factorizer_nb.core.settings import load_settings
from factorizer_nb.core.protocol import load_tokenizer
from factorizer_nb.sage.corpus import Corpus, Segmentation, greedy_split, pretokenize
from factorizer_nb.sage.pruning import SaGe, SaGeSettings
from factorizer_nb.sage.tokenizer import SaGeTokenizer, read_vocabulary
from factorizer_nb.sage.skipgram import PairScores
from factorizer_nb.sage.checkpoints import run_sage, save_checkpoint

LINES = ["the cat sat on the mat", "a cat and a hat 😀", "that hat is the hat of the cat", "mat", "",
         "at at at at the thatch", "ça va? 日本 😀😀"]


def toy(unit="char", extra=("▁the", "▁th", "at", "▁c", "▁cat", "▁a", "ha", "hat", "▁hat", "▁mat", "▁that", "tch", "😀😀")):
    corpus = Corpus.from_lines(LINES, unit)
    units = sorted({w[i:i + 1] for w in corpus.types for i in range(len(w))})
    if unit == "byte": units = [bytes([b]) for b in range(256)]
    more = [e.replace("▁", " ").encode() if unit == "byte" else e for e in extra]
    return corpus, units + [p for p in more if p not in units]


def full_change(seg, tokens, score, W):
    s2 = copy.deepcopy(seg)
    s2.apply(*s2.remove(tokens))
    return s2.sentence_ll(score, W).sum() - seg.sentence_ll(score, W).sum()


@pytest.mark.parametrize("unit", ["char", "byte"])
@pytest.mark.parametrize("splitter", ["greedy", "fewest"])
@pytest.mark.parametrize("W", [1, 2, 3, 5])
def test_deltas_match_full_rescoring(unit, splitter, W):
    corpus, pieces = toy(unit)
    seg = Segmentation(corpus, pieces, splitter)
    rng = np.random.default_rng(W)
    score = PairScores(rng.normal(size=(len(pieces), 6)), rng.normal(size=(len(pieces), 6)))
    cands = [t for t in range(len(pieces)) if not seg.protected[t] and seg.tok_types[t]]
    abl, types, new = [], [], []
    for i, t in enumerate(cands):
        for w in sorted(seg.tok_types[t]):
            abl.append(i); types.append(w); new.append(seg.split(corpus.types[w], banned={t}))
    d = seg.deltas(np.array(abl), np.array(types, np.int64), new, W, score, len(cands))
    for i, t in enumerate(cands):
        assert d[i] == pytest.approx(full_change(seg, [t], score, W), abs=1e-6)


words = st.lists(st.text(alphabet="abcé😀", min_size=1, max_size=6), min_size=0, max_size=12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(words, min_size=1, max_size=6), st.integers(1, 4), st.integers(0, 2**16), st.sampled_from(["greedy", "fewest"]))
def test_deltas_property(sentences, W, seed, splitter):
    "Random corpora and vocabularies: removing a random set of tokens changes the likelihood exactly as the deltas say."
    lines = [" ".join(s) for s in sentences]
    assume(any(l.split() for l in lines))
    corpus = Corpus.from_lines(lines)
    rng = np.random.default_rng(seed)
    subs = sorted({w[i:j] for w in corpus.types for i in range(len(w)) for j in range(i + 2, min(len(w), i + 4) + 1)})
    units = sorted({c for w in corpus.types for c in w})
    pieces = units + [s for s in subs if rng.random() < 0.5]
    seg = Segmentation(corpus, pieces, splitter)
    score = PairScores(rng.normal(size=(len(pieces), 4)), rng.normal(size=(len(pieces), 4)))
    prunable = [t for t in range(len(pieces)) if not seg.protected[t]]
    assume(prunable)
    drop = sorted(rng.choice(prunable, size=min(3, len(prunable)), replace=False).tolist())
    s2 = copy.deepcopy(seg)
    types, new = s2.remove(drop)
    if len(types):
        d, per_sent = s2.deltas(np.zeros(len(types), np.int64), types, new, W, score, 1, per_sentence=True)
    else:
        d, per_sent = np.zeros(1), np.zeros(corpus.n_sents)
    before = seg.sentence_ll(score, W)
    s2.apply(types, new)
    assert d[0] == pytest.approx(s2.sentence_ll(score, W).sum() - before.sum(), abs=1e-6)
    assert np.allclose(before + per_sent, s2.sentence_ll(score, W), atol=1e-6)


def small_sage(**kw):
    corpus, pieces = toy()
    n_units = sum(len(p) == 1 for p in pieces)
    args = dict(final_size=n_units + 4, k=2, M=5, m=2, l=2, window=2, w2v_dim=8, w2v_epochs=3, seed=7)
    args.update(kw)
    return SaGe(corpus, pieces, SaGeSettings(**args))


def test_same_seed_same_vocabulary(tmp_path):
    a, b = small_sage(), small_sage()
    assert run_sage(a, tmp_path / "a", progress=False) == run_sage(b, tmp_path / "b", progress=False)
    sa, sb = (pd.read_csv(tmp_path / x / "steps.tsv", sep="\t") for x in "ab")
    assert sa.objective.tolist() == sb.objective.tolist()
    log = pd.read_csv(tmp_path / "a" / "pruning_log.tsv", sep="\t")
    assert len(log) == len(toy()[1]) - len(a.vocabulary())
    assert not any(len(p) == 1 for p in log.piece)                        # single characters are never pruned
    assert read_vocabulary(tmp_path / "a" / "vocab.txt") == a.vocabulary()


def test_byte_mode_run(tmp_path):
    "The compatibility mode (bytes, ±2, one table) runs end to end and writes hex vocabularies and logs."
    corpus, pieces = toy("byte")
    s = SaGe(corpus, pieces, 256 + 4, k=3, M=10**6, m=1, l=2, window=2, shared_vectors=True, w2v_dim=8, w2v_epochs=2)
    final = run_sage(s, tmp_path, progress=False)
    assert len(final) == 260 and final[:256] == [bytes([b]) for b in range(256)]
    assert read_vocabulary(tmp_path / "vocab.txt", "byte") == final
    log = pd.read_csv(tmp_path / "pruning_log.tsv", sep="\t", dtype=str)
    assert all(len(bytes.fromhex(h)) > 1 for h in log.piece)
    assert np.array_equal(s.scores.T, s.scores.C)


def test_incremental_objective_matches_rescoring():
    s = small_sage(final_size=sum(len(p) == 1 for p in toy()[1]))
    while s.size > s.settings.final_size:
        s.next_step()
        assert s.objective == pytest.approx(s.seg.sentence_ll(s.scores, s.settings.window).sum(), abs=1e-6)


def test_resume_after_interruption(tmp_path, monkeypatch):
    full = run_sage(small_sage(), tmp_path / "full", progress=False)
    calls = {"n": 0}
    original = SaGe.next_step

    def flaky(self):
        calls["n"] += 1
        if calls["n"] == 3: raise KeyboardInterrupt
        return original(self)
    monkeypatch.setattr(SaGe, "next_step", flaky)
    with pytest.raises(KeyboardInterrupt):
        run_sage(small_sage(), tmp_path / "part", progress=False)
    monkeypatch.setattr(SaGe, "next_step", original)
    assert run_sage(small_sage(), tmp_path / "part", progress=False) == full
    a = pd.read_csv(tmp_path / "full" / "pruning_log.tsv", sep="\t")
    b = pd.read_csv(tmp_path / "part" / "pruning_log.tsv", sep="\t")
    assert a.piece.tolist() == b.piece.tolist()


def test_corrupt_or_foreign_checkpoint(tmp_path):
    s = small_sage(); s.next_step(); save_checkpoint(s, tmp_path)
    with pytest.raises(ValueError, match="another configuration"):
        run_sage(small_sage(k=1), tmp_path, progress=False)
    (tmp_path / "checkpoint.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="corrupt SaGe checkpoint"):
        run_sage(small_sage(), tmp_path, progress=False)


def whole_line_greedy(line: bytes, vocab: set, max_len: int = 16) -> list:
    "The public implementation's tokenizer: greedy longest match over the bytes of a whole line."
    out, i = [], 0
    while i < len(line):
        for j in range(min(max_len, len(line) - i), 0, -1):
            if line[i:i + j] in vocab: out.append(line[i:i + j]); i += j; break
    return out


@pytest.mark.parametrize("line", LINES + ["  two  spaces ", "😀"])
def test_byte_mode_matches_whole_line_greedy(line):
    _, pieces = toy("byte")
    tok = SaGeTokenizer(pieces, unit="byte")
    assert tok.line_pieces(line) == whole_line_greedy((line + "\n").encode(), set(pieces))


def test_bad_input():
    with pytest.raises(ValueError, match="no words"):
        Corpus.from_lines(["", "   "])
    corpus, pieces = toy()
    with pytest.raises(ValueError, match="not in the vocabulary"):
        Segmentation(corpus, [p for p in pieces if p != "😀"])
    with pytest.raises(ValueError, match="duplicate"):
        Segmentation(corpus, pieces + pieces[:1])
    assert pretokenize("") == [] and greedy_split("", {}, 1) == []



def test_from_settings_reads_the_sage_keys():
    S = load_settings("gd", "tiny")
    expected = SaGeSettings(S["sage_final_vocab"], k=S["sage_k"], M=S["sage_M"], m=S["sage_m"], l=S["sage_l"],
                            window=S["sage_window"], w2v_window=S["sage_w2v_window"], w2v_dim=S["sage_w2v_dim"],
                            w2v_negative=S["sage_w2v_negative"], w2v_epochs=S["sage_w2v_epochs"],
                            w2v_workers=S["sage_w2v_workers"], splitter=S["sage_splitter"], seed=S["seed"])
    assert SaGeSettings.from_settings(S) == expected
    corpus, pieces = toy()
    cfg = SaGeSettings.from_settings(dict(S, sage_final_vocab=30, sage_k=3))
    s = SaGe(corpus, pieces, cfg, window=2)
    assert (s.settings.final_size, s.settings.k, s.settings.window) == (30, 3, 2)


# --- SaGeTokenizer: the tokenizer protocol over a SaGe vocabulary
def tokenizers():
    chars, byts = toy()[1], toy("byte")[1]
    return {"char": SaGeTokenizer(chars), "char-fewest": SaGeTokenizer(chars, splitter="fewest", name="fewest"),
            "byte": SaGeTokenizer(byts, "byte", name="bytes")}


TOKENIZERS = tokenizers()
KNOWN = sorted({c for l in LINES for c in l if not c.isspace()})           # characters every toy vocabulary has
texts_known = st.lists(st.text(alphabet=KNOWN, min_size=1, max_size=8), max_size=8).flatmap(
    lambda ws: st.lists(st.sampled_from([" ", "  ", "\t", "\n", "\u3000"]), min_size=len(ws), max_size=len(ws)).map(
        lambda sp: "".join(s + w for s, w in zip(sp, ws))))
texts_any = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\u2581"), max_size=40)


@pytest.mark.parametrize("name", list(TOKENIZERS))
def test_tokenizer_save_load_identical_encodings(name, tmp_path):
    tok = TOKENIZERS[name]
    back = load_tokenizer(tok.save(tmp_path / "tok.json"))
    assert type(back) is SaGeTokenizer and back.config() == tok.config() and back.name == tok.name
    for text in LINES + ["  two  spaces ", "unknown ☃ 𝔘 x", "[CLS] the [MASK] cat"]:
        assert back.encode(text) == tok.encode(text)
        assert back.encode(text, add_special_tokens=True) == tok.encode(text, add_special_tokens=True)


@settings(max_examples=60, deadline=None)
@given(text=st.one_of(texts_known, texts_any), name=st.sampled_from(list(TOKENIZERS)))
def test_tokenizer_offsets_slice_the_words(text, name):
    "Offsets stay inside their word and cover it; where the token has a text, it is the text at its offsets."
    tok = TOKENIZERS[name]
    enc = tok.encode(text)
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    for w, (a, b) in enumerate(words):
        spans = [o for o, wid in zip(enc.offsets, enc.word_ids) if wid == w]
        assert spans and min(s for s, _ in spans) == a and max(e for _, e in spans) == b
        assert all(a <= s <= e <= b for s, e in spans)
    for t, (s, e) in zip(enc.tokens, enc.offsets):
        if tok.token_text(t) is not None: assert text[s:e] == tok.token_text(t)
        elif t == "[UNK]": assert len(text[s:e]) == 1 and text[s:e] not in tok.index


@settings(max_examples=60, deadline=None)
@given(text=texts_known, name=st.sampled_from(list(TOKENIZERS)))
def test_tokenizer_decode_encode_known_text(text, name):
    tok = TOKENIZERS[name]
    assert tok.decode(tok.encode(text).ids) == " ".join(text.split())


@settings(max_examples=60, deadline=None)
@given(text=texts_any)
def test_byte_tokenizer_is_lossless(text):
    tok = TOKENIZERS["byte"]
    assert tok.lossless and not TOKENIZERS["char"].lossless
    assert tok.decode(tok.encode(text).ids) == " ".join(text.split())


@pytest.mark.parametrize("line", LINES + ["x ☃y"])
def test_tokenizer_tokens_are_the_pieces_of_pruning(line):
    "encode's tokens are the pieces SaGe used (line_pieces), with [UNK] where a character is outside the vocabulary."
    tok = TOKENIZERS["char"]
    pieces = tok.line_pieces(line)
    assert [p if p in tok.index else "[UNK]" for p in pieces] == tok.encode(line).tokens
    assert [tok.index.get(p, tok.special_id("[UNK]")) for p in pieces] == tok.encode(line).ids


@pytest.mark.slow
@needs_data
def test_sage_paper_notebook_tiny(tmp_path):
    "SaGe and BPE for Scottish Gaelic on the tiny profile: every figure and table with its data and manifest."
    from factorizer_nb.infra.reproduce import run_notebooks
    res = run_notebooks(["gd"], "tiny", [ROOT / "nbs/paper/21_sage.ipynb"], runs_dir=tmp_path / "runs",
                        parameters=dict(work_dir=str(tmp_path / "work"), figures_dir=str(tmp_path / "figures")))
    assert res == {("gd", "21_sage.ipynb"): None}
    out, tag = tmp_path / "figures", "gd_gd_arcosg-ud-train"
    for name in ("sage_fig1_token_length", "sage_fig2_fertility", "sage_fig3_neighbours", "sage_fig4_neighbour_ratio", "sage_objective"):
        for ext in ("png", "pdf", "manifest.json"): assert (out / f"{name}_{tag}.{ext}").stat().st_size > 0
        assert data_file(out, f"{name}_{tag}").stat().st_size > 0               # .csv, or .csv.xz when large
    eff = pd.read_csv(out / f"sage_encoding_efficiency_{tag}.csv")
    assert set(eff.vocabulary) == {"SaGe", "BPE"} and (eff.tokens >= eff.words).all()
    steps = pd.read_csv(tmp_path / "work" / "steps.tsv", sep="\t")
    assert steps.vocab_size.iloc[-1] == 300 and len(read_vocabulary(tmp_path / "work" / "vocab.txt")) == 300
    assert "Paper" in json.loads((out / f"sage_fig2_fertility_{tag}.manifest.json").read_text())["caption"]
