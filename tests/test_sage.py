"SaGe: neighbourhood deltas against full rescoring, determinism, resume, the byte mode against whole-line greedy matching, the paper notebook."
import copy, json
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck
from fixtures import ROOT, needs_data
from factorizer_nb.sage.pruning import (Corpus, SaGe, Segmentation, PairScores, GreedyTokenizer, greedy_split, pretokenize,
                                read_vocabulary)

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
    if not any(l.split() for l in lines): return
    corpus = Corpus.from_lines(lines)
    rng = np.random.default_rng(seed)
    subs = sorted({w[i:j] for w in corpus.types for i in range(len(w)) for j in range(i + 2, min(len(w), i + 4) + 1)})
    units = sorted({c for w in corpus.types for c in w})
    pieces = units + [s for s in subs if rng.random() < 0.5]
    seg = Segmentation(corpus, pieces, splitter)
    score = PairScores(rng.normal(size=(len(pieces), 4)), rng.normal(size=(len(pieces), 4)))
    prunable = [t for t in range(len(pieces)) if not seg.protected[t]]
    if not prunable: return
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
    return SaGe(corpus, pieces, **args)


def test_same_seed_same_vocabulary(tmp_path):
    a, b = small_sage(), small_sage()
    assert a.run(tmp_path / "a", progress=False) == b.run(tmp_path / "b", progress=False)
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
    final = s.run(tmp_path, progress=False)
    assert len(final) == 260 and final[:256] == [bytes([b]) for b in range(256)]
    assert read_vocabulary(tmp_path / "vocab.txt", "byte") == final
    log = pd.read_csv(tmp_path / "pruning_log.tsv", sep="\t", dtype=str)
    assert all(len(bytes.fromhex(h)) > 1 for h in log.piece)
    assert np.array_equal(s.scores.T, s.scores.C)


def test_incremental_objective_matches_rescoring():
    s = small_sage(final_size=sum(len(p) == 1 for p in toy()[1]))
    while s.size > s.final_size:
        s.next_step()
        assert s.objective == pytest.approx(s.seg.sentence_ll(s.scores, s.window).sum(), abs=1e-6)


def test_resume_after_interruption(tmp_path, monkeypatch):
    full = small_sage().run(tmp_path / "full", progress=False)
    calls = {"n": 0}
    original = SaGe.next_step

    def flaky(self):
        calls["n"] += 1
        if calls["n"] == 3: raise KeyboardInterrupt
        return original(self)
    monkeypatch.setattr(SaGe, "next_step", flaky)
    with pytest.raises(KeyboardInterrupt):
        small_sage().run(tmp_path / "part", progress=False)
    monkeypatch.setattr(SaGe, "next_step", original)
    resumed = small_sage()
    assert resumed.run(tmp_path / "part", progress=False) == full
    a = pd.read_csv(tmp_path / "full" / "pruning_log.tsv", sep="\t")
    b = pd.read_csv(tmp_path / "part" / "pruning_log.tsv", sep="\t")
    assert a.piece.tolist() == b.piece.tolist()


def test_corrupt_or_foreign_checkpoint(tmp_path):
    s = small_sage(); s.next_step(); s.save_checkpoint(tmp_path)
    with pytest.raises(ValueError, match="another configuration"):
        small_sage(k=1).run(tmp_path, progress=False)
    (tmp_path / "checkpoint.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="corrupt SaGe checkpoint"):
        small_sage().run(tmp_path, progress=False)


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
    tok = GreedyTokenizer(pieces, unit="byte")
    assert tok.encode(line) == whole_line_greedy((line + "\n").encode(), set(pieces))


def test_bad_input():
    with pytest.raises(ValueError, match="no words"):
        Corpus.from_lines(["", "   "])
    corpus, pieces = toy()
    with pytest.raises(ValueError, match="not in the vocabulary"):
        Segmentation(corpus, [p for p in pieces if p != "😀"])
    with pytest.raises(ValueError, match="duplicate"):
        Segmentation(corpus, pieces + pieces[:1])
    assert pretokenize("") == [] and greedy_split("", {}, 1) == []


@needs_data
def test_sage_paper_notebook_tiny(tmp_path):
    "SaGe and BPE for Scottish Gaelic on the tiny profile: every figure and table with its data and manifest."
    from factorizer_nb.infra.reproduce import run_notebooks
    res = run_notebooks(["gd"], "tiny", [ROOT / "nbs/paper/21_sage.ipynb"], runs_dir=tmp_path / "runs",
                        parameters=dict(work_dir=str(tmp_path / "work"), figures_dir=str(tmp_path / "figures")))
    assert res == {("gd", "21_sage.ipynb"): None}
    out, tag = tmp_path / "figures", "gd_gd_arcosg-ud-train"
    for name in ("sage_fig1_token_length", "sage_fig2_fertility", "sage_fig3_neighbours", "sage_fig4_neighbour_ratio", "sage_objective"):
        for ext in ("png", "pdf", "csv", "manifest.json"): assert (out / f"{name}_{tag}.{ext}").stat().st_size > 0
    eff = pd.read_csv(out / f"sage_encoding_efficiency_{tag}.csv")
    assert set(eff.vocabulary) == {"SaGe", "BPE"} and (eff.tokens >= eff.words).all()
    steps = pd.read_csv(tmp_path / "work" / "steps.tsv", sep="\t")
    assert steps.vocab_size.iloc[-1] == 300 and len(read_vocabulary(tmp_path / "work" / "vocab.txt")) == 300
    assert "Paper" in json.loads((out / f"sage_fig2_fertility_{tag}.manifest.json").read_text())["caption"]
