"The VQ-VAE end to end on the tiny profile: torchrun with two CPU processes, and vocabulary inference into the tokenizer."
import os, subprocess, sys
import pytest
import torch
from hypothesis import given, settings, strategies as st
from factorizer_nb.core.settings import load_settings
from factorizer_nb.core.corpora import word_counts
from factorizer_nb.factorizer.training import VQConfig, load_checkpoint, train
from factorizer_nb.factorizer.vocab import Vocabulary, has_stray_bytes
from factorizer_nb.factorizer.vocab_inference import infer_vocabulary
from factorizer_nb.factorizer.tokenizer import Factorizer, UNK
from fixtures import ROOT


@pytest.mark.slow
def test_torchrun_two_cpu_processes(tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           "-m", "factorizer_nb.factorizer.training", "--lang", "en", "--profile", "tiny", "--out", str(tmp_path), "--device", "cpu"]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    S = load_settings("en", "tiny")
    st = load_checkpoint(tmp_path / "checkpoint.pt")
    assert st["step"] == S["vq_steps"]
    assert int(st["prior"][1].sum()) == S["vq_steps"] * S["vq_batch_size"]      # both processes' triplets counted
    assert all(torch.isfinite(t).all() for t in st["model"].values())
    assert st["settings"] == VQConfig.from_settings(S).to_settings()
    rows = (tmp_path / "train_log.csv").read_text().splitlines()               # one log, written by rank 0 only
    assert rows[0].startswith("step,") and [int(r.split(",")[0]) for r in rows[1:]] == list(range(1, S["vq_steps"] + 1))


def test_resumed_run_matches_uninterrupted_run(tmp_path):
    S = dict(load_settings("en", "tiny"), vq_steps=4, vq_checkpoint_every=2, vq_batch_size=8)
    cfg, counts = VQConfig.from_settings(S), word_counts("wordfreq:en", top_n=200)
    full = load_checkpoint(train(counts, tmp_path / "full", cfg, progress=False))
    train(counts, tmp_path / "cut", cfg, stop_after=1, progress=False)
    with pytest.raises(TypeError, match="VQConfig"): train(counts, tmp_path / "cut", S, progress=False)   # settings: a config first
    resumed = load_checkpoint(train(counts, tmp_path / "cut", cfg, progress=False))
    assert resumed["step"] == full["step"] == 4
    for part in ("model", "ema"):
        assert all(torch.equal(full[part][k], resumed[part][k]) for k in full[part]), part
    assert all(torch.equal(a, b) for a, b in zip(full["prior"], resumed["prior"]))
    assert (tmp_path / "cut" / "train_log.csv").read_bytes() == (tmp_path / "full" / "train_log.csv").read_bytes()


@pytest.fixture(scope="module")
def tiny_vocab(tmp_path_factory):
    d = tmp_path_factory.mktemp("vq")
    S = load_settings("en", "tiny")
    cfg = VQConfig.from_settings(S)
    ckpt = train(word_counts("wordfreq:en", top_n=cfg.top_words), d, cfg, progress=False)
    return infer_vocabulary(ckpt, progress=False), d


def test_inferred_vocabulary_statistics_add_up(tiny_vocab):
    (vocab, stats), _ = tiny_vocab
    assert stats["vocab_size"] == len(vocab) > 0
    decoded = stats["vocab_size"] - stats["byte_fallback_added"]
    assert decoded + stats["duplicates"] + stats["unterminated"] + stats["malformed"] == stats["triplets_used"]
    assert len({t for _, t, _ in vocab.items()}) == len(vocab)                   # the fallback reuses no triplet
    assert all(lp <= 0 for _, _, lp in vocab.items())


@settings(max_examples=60, deadline=None)
@given(text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
       | st.lists(st.sampled_from(["👩‍👩‍👧", "e\u0301", "שלום", "日本語", "\x00", "\x1b[0m", "\u200d", "🇳🇴", "CAPS", "ǅ", "⸥", "a⸤b⸥", "⸤⸥"]), max_size=6).map(" ".join))
def test_tiny_model_never_gives_unk(tiny_vocab, text):
    "With the byte fallback, any text splits without [UNK], decodes back and its offsets slice the input."
    (vocab, _), _ = tiny_vocab
    fz = _tiny_tokenizer(vocab)
    enc = fz.encode(text)
    assert UNK not in enc.tokens and fz.decode(enc.ids) == " ".join(text.split())
    for w in set(enc.word_ids):
        toks = [(tok, o) for tok, o, j in zip(enc.tokens, enc.offsets, enc.word_ids) if j == w]
        for i, (tok, (s, e)) in enumerate(toks):
            inner = tok.removeprefix("⸥") if i == 0 else tok                   # the word's own marks, at its ends only
            inner = inner.removesuffix("⸤") if i == len(toks) - 1 else inner
            if not has_stray_bytes(tok): assert text[s:e] == inner, (tok, text[s:e])


_TOKENIZERS = {}
def _tiny_tokenizer(vocab):
    return _TOKENIZERS.setdefault(id(vocab), Factorizer(vocab))


def test_inferred_vocabulary_drives_the_tokenizer(tiny_vocab, tmp_path):
    (vocab, _), _ = tiny_vocab
    fz = Factorizer(Vocabulary.load(vocab.save(tmp_path / "v.dawg")), unk="parts")
    text = "the cat sat on the mat"
    enc = fz.encode(text)
    assert set(enc.word_ids) == set(range(6))
    for tok, (s, e) in zip(enc.tokens, enc.offsets):
        if tok != UNK and not has_stray_bytes(tok):
            assert text[s:e] == tok.strip("⸥⸤")
