"Masked language models (downstream.lm.*): DDP against accumulation, odd input over every tokenizer kind, span-mask properties, the tiny LM notebooks end to end."
import csv, json, math, os, shutil, socket, tarfile
from dataclasses import replace
from pathlib import Path
import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings, strategies as st
from fixtures import ROOT, needs_data
from factorizer_nb.downstream.lm.model import LMConfig, MaskedLM
from factorizer_nb.downstream.lm.data import span_mask, pack, pad_mask
from factorizer_nb.downstream.lm.training import has_bf16, LMTraining, train_lm, load_lm, mlm_loss, LOG
from factorizer_nb.downstream.lm.evaluation import pseudo_perplexity
from factorizer_nb.downstream.lm.cli import main

TINY = LMConfig(layers=2, hidden=32, ff=64, heads=2, dropout=0.0, attention_dropout=0.0, position_buckets=8, max_distance=32)
TEXTS = [f"the {w} sat on the mat and looked at the {v} for a while" for w in ("cat", "dog", "bird", "fox") for v in ("sun", "rain", "moon")] * 3


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory):
    "A sentencepiece BPE and a FACTORIZER stand-in vocabulary (triplet ids), both small."
    from factorizer_nb.core.corpora import word_counts
    from factorizer_nb.factorizer.tokenizer import Factorizer
    from factorizer_nb.factorizer.vocab import unigram_standin_vocab
    from factorizer_nb.downstream.tokenizer_points import spm_bpe
    counts = word_counts("wordfreq:en", top_n=1500)
    return {"bpe": spm_bpe(counts, 400, tmp_path_factory.mktemp("tok")), "factorizer": Factorizer(unigram_standin_vocab(counts, 300))}


def _losses(out_dir) -> list[float]:
    "The loss of every step in a pretraining run's log."
    return [float(r["loss"]) for r in csv.DictReader(open(Path(out_dir) / LOG, encoding="utf-8"))]


def _free_port() -> int:
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); return s.getsockname()[1]


def _this_run(path: Path) -> str:
    "The Markdown an executed notebook's 'This run' cell rendered: its verdict on its own run."
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    i = next(i for i, c in enumerate(cells)
             if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## This run"))
    return "".join("".join(o["data"]["text/markdown"]) for o in cells[i + 1]["outputs"]
                   if "text/markdown" in o.get("data", {}))

def _ddp_worker(rank: int, world: int, port: int, tok_file: str, out: str, training: LMTraining):
    import torch.distributed as dist
    from factorizer_nb.core.protocol import load_tokenizer
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try: train_lm(load_tokenizer(tok_file), TEXTS, out, config=TINY, training=training, progress=False)
    finally: dist.destroy_process_group()


@pytest.mark.parametrize("kind", ["bpe", "factorizer"])
def test_ddp_two_processes_take_the_same_steps_as_accumulation(tokenizers, tmp_path, kind):
    "Two gloo processes with one micro-batch each give the weights of one process accumulating two (dropout off)."
    tok = tokenizers[kind]
    t = LMTraining(steps=3, batch_size=8, micro_batch=4, seq_len=16, warmup_steps=1, lr_initial=3e-3, lr_final=3e-4, optimizer="adamw",
                   checkpoint_every=3, autocast="off")            # fp32: the equality below is exact only up to fp32 rounding
    one = torch.load(train_lm(tok, TEXTS, tmp_path / "one", config=TINY, training=t, progress=False), weights_only=True)
    tok_file = str(tok.save(tmp_path / "tok"))
    torch.multiprocessing.spawn(_ddp_worker, args=(2, _free_port(), tok_file, str(tmp_path / "two"), t), nprocs=2, join=True)
    two = torch.load(tmp_path / "two" / "lm.pt", weights_only=True)
    assert two["fingerprint"]["world"] == 2 and one["fingerprint"]["world"] == 1
    assert one["bf16"] is False and two["bf16"] is False                     # the precision each run used is kept with it
    D = TINY.hidden
    for name, w in one["model"].items():
        a, b = two["model"][name], w
        if name.endswith("qkv.bias"):                 # the key bias has no gradient (softmax ignores it): AdamW turns rounding noise
            a, b = torch.cat([a[:D], a[2 * D:]]), torch.cat([b[:D], b[2 * D:]])   # into full steps there, so only q and v are compared
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5, msg=name)
    assert np.allclose(_losses(tmp_path / "one"), _losses(tmp_path / "two"), rtol=1e-5)


@pytest.mark.parametrize("kind", ["bpe", "factorizer"])
def test_odd_text_gives_a_finite_loss(tokenizers, kind):
    "Empty texts, whitespace, emoji, combining marks and CJK pack into rows and give a finite loss and perplexity."
    tok = tokenizers[kind]
    texts = ["", "   ", "🙂 👍🏽 x", "e\u0301te\u0301", "上海 東京", "a" * 300]
    rows = torch.from_numpy(pack(tok.encode_ids_batch(texts), 16, *(tok.special_id(t) for t in ("[CLS]", "[SEP]", "[PAD]"))))
    assert rows.shape[1:2] == (16,) and pad_mask(rows, tok.special_id("[PAD]"))[:, 0].all()
    torch.manual_seed(0)
    model = MaskedLM(tok, TINY)
    loss, n = mlm_loss(model, rows, tok, 0.15, np.random.default_rng(0))
    assert n > 0 and torch.isfinite(loss)
    r = pseudo_perplexity(model.eval(), tok, texts, seq_len=16, groups=2)
    assert math.isfinite(r["ppl_word"]) and r["words"] + r["skipped_words"] == sum(len(t.split()) for t in texts)


@given(st.lists(st.lists(st.booleans(), min_size=1, max_size=60), min_size=1, max_size=6).filter(lambda r: len({len(x) for x in r}) == 1),
       st.floats(0.01, 0.5), st.integers(0, 2**32 - 1))
@settings(max_examples=60, deadline=None)
def test_span_mask_chooses_the_share_among_candidates(rows, p, seed):
    cand = np.array(rows, dtype=bool)
    m = span_mask(cand, p, np.random.default_rng(seed))
    assert not (m & ~cand).any()
    for row, c in zip(m, cand):
        n = int(c.sum())
        assert row.sum() == (max(1, round(p * n)) if n else 0)


def test_command_line_errors(tmp_path):
    "Bad arguments end in one line naming the problem, before anything trains."
    def err(argv):
        with pytest.raises(SystemExit) as e: main(argv)
        return str(e.value.code)
    assert err(["--lang", "xx", "--tokenizer", "t", "--out", str(tmp_path)]).startswith("lm: settings.ini has no section [xx]")
    assert err(["--profile", "nope", "--tokenizer", "t", "--out", str(tmp_path)]) == "lm: settings.ini has no section [profile:nope]"
    assert err(["--lang", "en", "--profile", "tiny", "--tokenizer", str(tmp_path / "none.tok"), "--out", str(tmp_path)]) == f"lm: no tokenizer file {tmp_path / 'none.tok'}"


def test_non_finite_loss_is_an_error(tokenizers, tmp_path):
    "A learning rate that blows the model up stops the run with a clear error instead of writing NaN weights."
    t = LMTraining(steps=30, batch_size=4, micro_batch=4, seq_len=16, warmup_steps=1, lr_initial=1e6, lr_final=1e6, optimizer="adamw",
                   grad_clip=1e9, checkpoint_every=100)
    with pytest.raises(FloatingPointError, match="non-finite loss"):
        train_lm(tokenizers["bpe"], TEXTS, tmp_path, config=TINY, training=t, progress=False)
    assert not (tmp_path / "lm.pt").exists()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["bpe", "factorizer"])
def test_paper_profile_takes_a_step_on_the_cpu(tokenizers, tmp_path, kind):
    "The `paper` profile's encoder (Table 6 shapes, LAMB, FACTORIZER's 3 extra layers) takes one real step; only the batch is cut to 2 sequences."
    from factorizer_nb.core.settings import load_settings
    P = load_settings("en", "paper")
    tok = tokenizers[kind]
    config = LMConfig.from_settings(P, extra_layers=P["lm_extra_layers"] if kind == "factorizer" else 0)
    t = replace(LMTraining.from_settings(P), steps=1, batch_size=2, micro_batch=2)
    assert (config.layers, config.hidden, t.optimizer, t.seq_len) == (15 if kind == "factorizer" else 12, 768, "lamb", 128)
    torch.manual_seed(t.seed)
    init = MaskedLM(tok, config).state_dict()
    final = torch.load(train_lm(tok, TEXTS * 4, tmp_path, config=config, training=t, progress=False), weights_only=True)
    assert final["fingerprint"]["training"]["optimizer"] == "lamb"
    loss = _losses(tmp_path)[0]
    assert math.isfinite(loss) and loss > 0
    assert all(torch.isfinite(w).all() for w in final["model"].values())
    assert any(not torch.equal(w, init[n]) for n, w in final["model"].items() if n.startswith("blocks."))


@pytest.mark.parametrize("kind", ["bpe", "factorizer"])
def test_cpu_profile_pretraining_resumes_exactly(tokenizers, tmp_path, kind):
    "The `cpu` profile's encoder and optimisation (issue #27), cut to 4 steps of 4 sequences: killed twice and resumed, the same weights as one run."
    from factorizer_nb.core.settings import load_settings
    C = load_settings("en", "cpu")
    tok, config = tokenizers[kind], LMConfig.from_settings(C, extra_layers=C["lm_extra_layers"] if kind == "factorizer" else 0)
    t = replace(LMTraining.from_settings(C), steps=4, batch_size=4, micro_batch=2, warmup_steps=1, checkpoint_every=1)
    assert (t.optimizer, t.autocast, t.seq_len) == ("adamw", C["lm_autocast"], 128)
    full = torch.load(train_lm(tok, TEXTS * 4, tmp_path / "a", config=config, training=t, progress=False), weights_only=True)
    for stop in (2, 3):                                                         # interrupted after steps 2 and 3
        train_lm(tok, TEXTS * 4, tmp_path / "b", config=config, training=t, progress=False, stop_after=stop)
    resumed = torch.load(train_lm(tok, TEXTS * 4, tmp_path / "b", config=config, training=t, progress=False), weights_only=True)
    for name, w in full["model"].items(): assert torch.equal(w, resumed["model"][name]), name
    assert _losses(tmp_path / "a") == _losses(tmp_path / "b")


@pytest.mark.parametrize("kind", ["bpe", "factorizer"])
def test_prefetched_epochs_are_the_epochs_packed_in_turn(tokenizers, tmp_path, kind):
    "A sampling tokenizer's epochs packed ahead in a child process (`prefetch`, on by default on a GPU) give the same rows, and the same weights, as packed in turn."
    from factorizer_nb.factorizer.tokenizer import Factorizer
    from factorizer_nb.core.corpora import word_counts
    from factorizer_nb.downstream.tokenizer_points import spm_bpe
    from factorizer_nb.downstream.lm.data import packed_rows
    from factorizer_nb.downstream.lm.training import EpochRows
    tok = (spm_bpe(word_counts("wordfreq:en", top_n=1500), 400, tmp_path / "tok", dropout=0.3, seed=42) if kind == "bpe"
           else Factorizer(tokenizers["factorizer"].vocab, sigma_sample=0.5, seed=42))
    assert tok.samples
    ahead = EpochRows(tok, TEXTS, 16, seed=3, prefetch=True)
    try: got = [ahead(e) for e in range(3)]
    finally: ahead.close()
    want = [packed_rows(tok, TEXTS, 16, e, 3) for e in range(3)]
    assert not np.array_equal(want[0], want[1])                                 # the epochs differ, so equality below says something
    for g, w in zip(got, want): np.testing.assert_array_equal(g, w)
    steps = len(want[0]) // 8 + 2                                               # into the second epoch
    t = LMTraining(steps=steps, batch_size=8, micro_batch=8, seq_len=16, warmup_steps=1, lr_initial=3e-3, lr_final=3e-4, optimizer="adamw",
                   checkpoint_every=steps, autocast="off")
    a = torch.load(train_lm(tok, TEXTS, tmp_path / "a", config=TINY, training=t, progress=False, prefetch=False), weights_only=True)
    b = torch.load(train_lm(tok, TEXTS, tmp_path / "b", config=TINY, training=t, progress=False, prefetch=True), weights_only=True)
    assert len({r["epoch"] for r in csv.DictReader(open(tmp_path / "b" / LOG))}) >= 2  # the run crossed an epoch boundary
    for name, w in a["model"].items(): assert torch.equal(w, b["model"][name]), name


@needs_data
def test_cpu_profile_finetuning_resumes_exactly(tokenizers, tmp_path):
    "Fine-tuning at the `cpu` profile's settings (Table 7's learning rate, warm-up, per-epoch dev scores), interrupted after an epoch, ends with the weights of one run."
    from factorizer_nb.core.settings import load_settings
    from factorizer_nb.downstream.ud_data import read_treebank
    from factorizer_nb.downstream.parser import ParserConfig
    from factorizer_nb.downstream.parser_training import ParserTraining, train_parser, LOG as PARSER_LOG, FINAL as PARSER_FINAL
    from factorizer_nb.downstream.lm.finetune import finetune_build
    C = load_settings("en", "cpu")
    tok = tokenizers["bpe"]
    lm_path = train_lm(tok, TEXTS * 4, tmp_path / "lm", config=TINY, training=LMTraining(steps=2, batch_size=4, micro_batch=4, seq_len=32,
                       warmup_steps=1, optimizer="adamw", checkpoint_every=2), progress=False)
    build, build_id = finetune_build(lm_path)
    ft = replace(ParserTraining.from_settings(C, finetune=True), epochs=3, batch_size=8)
    assert (ft.lr_initial, C["ft_eval_every"]) == (1e-3, 1) and C["ud_train_sentences"] == 0
    train, dev = read_treebank(C["parser_train"])[:24], read_treebank(C["parser_dev"])[:8]
    config = ParserConfig.from_settings(C)
    kw = dict(config=config, training=ft, progress=False, build=build, build_id=build_id, eval_every=C["ft_eval_every"])
    one = train_parser(tok, train, dev, tmp_path / "one", **kw)

    def stop_after_first(epoch, scores):
        if epoch == 1: raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt): train_parser(tok, train, dev, tmp_path / "two", on_epoch_end=stop_after_first, **kw)
    two = train_parser(tok, train, dev, tmp_path / "two", **kw)
    assert one == two
    a, b = (torch.load(tmp_path / d / PARSER_FINAL, weights_only=True)["model"] for d in ("one", "two"))
    for name, w in a.items(): assert torch.equal(w, b[name]), name
    log = list(csv.DictReader(open(tmp_path / "two" / PARSER_LOG, encoding="utf-8")))
    assert [r["epoch"] for r in log] == ["1", "2", "3"] and all(r["LAS"] for r in log)     # dev scored after every epoch


@pytest.mark.slow
@needs_data
def test_lm_notebooks_tiny(tmp_path):
    """Tables 1/3, the four-tokenizer table and Figures 6 and 7 on the tiny profile (FACTORIZER: a stand-in vocabulary where 12_vocab_inference puts
    its own; the VQ-VAE notebooks have their own smoke test); kept predictions re-score."""
    from factorizer_nb.infra.reproduce import paper_notebooks, run_notebooks
    from factorizer_nb.downstream.ud_data import score_conllu
    from factorizer_nb.core.corpora import word_counts
    from factorizer_nb.factorizer.vocab import unigram_standin_vocab
    (tmp_path / "work").mkdir()
    unigram_standin_vocab(word_counts("wordfreq:en", top_n=2000), 300).save(tmp_path / "work" / "vocab.dawg")
    nbs = paper_notebooks(ROOT, "lm")
    assert [n.name[:2] for n in nbs] == ["44", "45", "46", "47"]
    res = run_notebooks(["en"], "tiny", nbs, runs_dir=tmp_path / "runs",
                        parameters=dict(work_dir=str(tmp_path / "work"), figures_dir=str(tmp_path / "figures"), ledger=1))
    assert all(v is None for v in res.values()), res
    said = {p.name[:2]: _this_run(p) for p in (tmp_path / "runs").rglob("4[4-7]_*.ipynb")}   # each one's own verdict
    assert sorted(said) == ["44", "45", "46", "47"] and all("'tiny' profile" in v for v in said.values()), said
    assert "No BPE and FACTORIZER pair in this run" in said["44"], said["44"]     # 44 checked BPE alone: one line
    assert "Table 1, FACTORIZER ahead of BPE on LAS" in said["45"] and "From 1 to 0.25 of the text" in said["46"], said
    assert "FACTORIZER loses" in said["47"] and "p_noise = 0 to 0.1" in said["47"], said["47"]
    out = tmp_path / "figures"
    t1 = pd.read_csv(out / "table1_lm_ablation_en.csv")
    assert list(t1.model) == ["BPE", "BPE + sampling", "BPE + sampling + averaging", "FACTORIZER", "FACTORIZER + sampling",
                              "FACTORIZER + sampling + averaging", "FACTORIZER (12L)"]
    assert "paper LAS" in t1 and t1.LAS.notna().all()
    m1 = json.loads((out / "table1_lm_ablation_en.manifest.json").read_text())
    assert "From scratch, with no pretrained encoder" in m1["caption"]
    assert set(m1["perplexity_over_unigram"]) == {"BPE", "BPE + sampling", "FACTORIZER", "FACTORIZER + sampling", "FACTORIZER (12L)"}
    assert set(m1["perplexity_over_factorized_unigram"]) == {"FACTORIZER", "FACTORIZER + sampling", "FACTORIZER (12L)"}
    gates = pd.read_csv(out / "table_lm_gates_en.csv")
    assert list(gates.model) == ["BPE"] and np.allclose(gates.ppl_word_over_unigram, gates.ppl_word / gates.unigram_ppl_word)
    assert (gates["gate 1 met"] == (gates.ppl_word_over_unigram <= 0.1)).all()          # 4 steps: far from it
    assert (gates["gate 2 met"] == (gates["fine-tuned LAS"] > gates["from-scratch LAS"])).all()
    ctl = pd.read_csv(out / "table_lm_gate2_controls_en.csv")                  # gate 2's controls: 2 encoders x 2 architectures, and scratch
    assert list(ctl.encoder) == ["pretrained", "random init", "pretrained", "random init", "none (the BiLSTM parser)"]
    assert list(ctl.between.str.contains("BiLSTM")) == [False, False, True, True, False]
    paper_row, scratch_row = ctl.iloc[0], ctl.iloc[-1]                         # the same runs as gate 2's, reused
    assert np.isclose(paper_row.LAS, gates["fine-tuned LAS"].iloc[0]) and np.isclose(scratch_row.LAS, gates["from-scratch LAS"].iloc[0])
    bilstm_row = ctl.iloc[2]                                                   # the gates table names the BiLSTM control's gate 2 as well
    assert np.isclose(gates.filter(like="fine-tuned LAS, mix ->").iloc[0, 0], bilstm_row.LAS)
    assert gates["gate 2 met with the BiLSTM"].iloc[0] == (bilstm_row.LAS > scratch_row.LAS)
    four = pd.read_csv(out / "table_lm_tokenizers_en.csv")
    models = ["BPE", "Unigram LM", "SaGe", "FACTORIZER", "FACTORIZER (12L)"]
    assert list(four.model) == models + [f"{m}, from scratch" for m in models[:4]]
    lm = four.iloc[:5]
    assert (lm["held-out pseudo-perplexity per word"] > 1).all() and four.iloc[5:]["held-out pseudo-perplexity per word"].isna().all()
    assert np.allclose(lm["over unigram"], lm["held-out pseudo-perplexity per word"] / lm["unigram model per word"], rtol=0.01)
    assert lm["factorized unigram per word"].notna().tolist() == [False, False, False, True, True]   # three-softmax heads only
    bpe_scratch = four.set_index("model").LAS["BPE, from scratch"]             # the gates' from-scratch run, reused
    assert np.isclose(float(str(bpe_scratch).split()[0]), gates["from-scratch LAS"].iloc[0], atol=0.01)
    assert "fine-tuning beats the from-scratch parser on LAS for" in json.loads((out / "table_lm_tokenizers_en.manifest.json").read_text())["caption"]
    fig7 = pd.read_csv(out / "fig7_scarcity_en.csv")
    assert set(fig7.fraction) == {1.0, 0.25} and set(fig7.model) == {"BPE", "FACTORIZER"}
    fig7_manifest = json.loads((out / "fig7_scarcity_en.manifest.json").read_text())
    caption = fig7_manifest["caption"]
    assert "same 4 steps" in caption and "Paper: Figure 7" in caption and "over the add-one unigram model of its own fraction" in caption
    assert "Table 6: 12 x 768, 31,250 steps of 32,768 x 128" in caption and "(Table 7: 20 epochs)" in caption   # our scale against the paper's
    assert "dotted: a three-softmax head's over the factorized unigram model" in caption     # FACTORIZER's fair reference drawn beside it
    assert set(fig7_manifest["perplexity_over_unigram"]) == {"BPE", "FACTORIZER", "BPE, 1/4", "FACTORIZER, 1/4"}
    words = fig7_manifest["words"]                                            # each fraction's pretraining text, for the results index
    assert set(words) == {"1", "0.25"} and 0 < words["0.25"] < words["1"]
    learned = pd.read_csv(out / "table_fig7_lm_en.csv")                        # did each of Figure 7's models learn? one row per model and fraction
    assert sorted(zip(learned.model, learned.fraction)) == sorted((m, f) for m in ("BPE", "FACTORIZER") for f in (1.0, 0.25))
    assert np.allclose(learned.ppl_word_over_unigram, learned.ppl_word / learned.unigram_ppl_word)
    assert (learned.loss_last_500 > 0).all() and np.isfinite(learned.loss_last_500).all()   # 4 steps: the mean of all of them
    on = learned.pretrained_on.str.startswith("CPU")                           # where each model was pretrained, in the table and both captions
    assert on.all() and all(f"{d}: " in caption and f"{d}: " in json.loads((out / "table_fig7_lm_en.manifest.json").read_text())["caption"] for d in set(learned.pretrained_on))
    from factorizer_nb.factorizer.claims import CONTEXT_FREE
    stuck = learned[learned.ppl_word_over_factorized_unigram >= CONTEXT_FREE]   # heads that never left the context-free solution: named in the caption, or it says none
    assert ("Still at the context-free solution" in caption) == (len(stuck) > 0)
    assert all(f"{m} {f:g}" in caption.split("Still at the context-free solution")[-1] for m, f in zip(stuck.model, stuck.fraction))
    full = learned[learned.fraction == 1].set_index("model").ppl_word     # the whole text's models are 45's: the same perplexity
    assert np.allclose(full.loc[["BPE", "FACTORIZER"]], lm.set_index("model")["held-out pseudo-perplexity per word"].loc[["BPE", "FACTORIZER"]], rtol=1e-3)
    quarter = learned[learned.fraction == 0.25].set_index("model")        # a quarter of the text: its own unigram model, not the whole text's
    assert (quarter.unigram_ppl_word.loc[["BPE", "FACTORIZER"]].values != learned[learned.fraction == 1].set_index("model").unigram_ppl_word.loc[["BPE", "FACTORIZER"]].values).all()
    fig6 = pd.read_csv(out / "fig6_lm_noise_en.csv")                           # the fine-tuned models of Table 1 under noise
    assert set(fig6.model) == {"BPE", "FACTORIZER"} and set(fig6.p_noise) == {0.0, 0.1}
    clean = fig6[fig6.p_noise == 0].set_index("model").LAS
    assert np.allclose(clean.loc[["BPE", "FACTORIZER"]], t1.set_index("model").LAS.loc[["BPE", "FACTORIZER"]].astype(float), atol=0.01)
    assert "Held-out pseudo-perplexity per word over the unigram model's" in json.loads((out / "fig6_lm_noise_en.manifest.json").read_text())["caption"]
    for name, nb in (("fig6_lm_noise_en", "47_fig6_lm_noise"), ("table_lm_gates_en", "44_lm_gates"), ("table1_lm_ablation_en", "45_lm_tables"),
                     ("table_lm_tokenizers_en", "45_lm_tables"), ("fig7_scarcity_en", "46_fig7_scarcity")):
        m = json.loads((out / f"{name}.manifest.json").read_text())         # which notebook wrote it, and the training behind its records
        assert m["notebook"]["path"] == f"nbs/paper/lm/{nb}.ipynb" and m["notebook"]["seconds"] > 0, (name, m.get("notebook"))
        assert m["compute"]["pretrained_models"] >= 1 and m["compute"]["parser_runs"] >= 1 and m["compute"]["pretrain_hours"] >= 0, (name, m["compute"])
        assert "h of pretraining" in m["caption"], name
    for d in (tmp_path / "work" / "lm").glob("*/full/ud/seed*"):              # kept predictions re-score to the tables' numbers
        s = score_conllu(d / "dev.gold.conllu", d / "dev.conllu")
        assert 0 <= s["LAS"] <= 100
    ledger = tmp_path / "work" / "ledger" / "lm"                              # every result recorded
    assert {p.name for p in ledger.glob("*/full/*.json")} == {"pretrain.json", "perplexity.json"} and len(list(ledger.glob("*/full/pretrain.json"))) == 7
    shutil.rmtree(tmp_path / "work" / "lm")                                    # runs/ lost: the gates come back from the ledger, nothing trained
    res = run_notebooks(["en"], "tiny", nbs[:1], runs_dir=tmp_path / "runs2",  # two models' gates, controls for one
                        parameters=dict(work_dir=str(tmp_path / "work"), figures_dir=str(tmp_path / "fig2"), models="BPE,FACTORIZER", controls="BPE",
                                        ledger=1))
    assert all(v is None for v in res.values()), res
    assert not list((tmp_path / "work" / "lm").rglob("*.pt")), "a model was trained again"
    two = pd.read_csv(tmp_path / "fig2" / "table_lm_gates_en.csv")
    assert list(two.model) == ["BPE", "FACTORIZER"] and np.isclose(two.ppl_word.iloc[0], gates.ppl_word.iloc[0])
    assert two.filter(like="fine-tuned LAS, mix ->").iloc[:, 0].isna().tolist() == [False, True]
    assert set(pd.read_csv(tmp_path / "fig2" / "table_lm_gate2_controls_en.csv").base) == {"BPE"}
    assert "Fine-tuned FACTORIZER is" in _this_run(next((tmp_path / "runs2").rglob("44_*.ipynb")))
    res = run_notebooks(["en"], "tiny", nbs[2:3], runs_dir=tmp_path / "runs3",  # Figure 7 on some of the fractions, from the ledger
                        parameters=dict(work_dir=str(tmp_path / "work"), figures_dir=str(tmp_path / "fig3"), fractions="1", ledger=1))
    assert all(v is None for v in res.values()), res
    assert not list((tmp_path / "work" / "lm").rglob("*.pt")), "a model was trained again"
    part = pd.read_csv(tmp_path / "fig3" / "fig7_scarcity_en.csv")
    assert set(part.fraction) == {1.0} and np.allclose(part.groupby("model").LAS.mean(), fig7[fig7.fraction == 1].groupby("model").LAS.mean())
    assert "Not in this run: fractions 0.25 of the 'tiny' profile." in json.loads((tmp_path / "fig3" / "fig7_scarcity_en.manifest.json").read_text())["caption"]
    one = _this_run(next((tmp_path / "runs3").rglob("46_*.ipynb")))                # one fraction: said in one line
    assert "Only fraction 1 in this run: no scarcity to compare." in one, one


def test_a_run_keeps_its_precision():
    "Under auto, a resumed run keeps the precision its checkpoint recorded, whatever the probe says now; forced modes win."
    from factorizer_nb.downstream.lm.training import _run_bf16
    assert _run_bf16("cpu", "auto", True, 1) is True and _run_bf16("cpu", "auto", False, 1) is False
    assert _run_bf16("cpu", "bf16", False, 1) is True and _run_bf16("cpu", "off", True, 1) is False
    assert _run_bf16("cpu", "auto", None, 1) == has_bf16("cpu")



@needs_data
def test_pretraining_command_and_the_reuse_of_finished_models(tokenizers, tmp_path):
    "`python -m factorizer_nb.downstream.lm_command` (the GPU-machine path) pretrains into the notebooks' directory; `pretrain` reuses that model, and only under its own fingerprint."
    import subprocess, sys
    from factorizer_nb.downstream.lm.finetune import LMSpec
    from factorizer_nb.downstream.lm.cli import pretrain
    from factorizer_nb.downstream.lm_experiments import LMExperiment
    cmd = [sys.executable, "-m", "factorizer_nb.downstream.lm_command", "--profile", "tiny", "--models", "BPE", "--fractions", "0.5",
           "--work-dir", str(tmp_path), "--device", "cpu", "--pack", str(tmp_path / "packed")]
    run = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    exp = LMExperiment.setup("en", "tiny", tmp_path, "cpu")
    (spec,) = exp.specs(["BPE"])
    path = exp.run_dir(spec, 0.5) / "pretrain" / "lm.pt"
    assert [line.split(": ", 1)[1] for line in run.stdout.splitlines() if line.startswith("pretrained BPE, fraction 0.5: ")] == [str(path)]
    final = torch.load(path, weights_only=True)
    assert final["trained_on"]["device"].startswith("CPU") and final["trained_on"]["torch"] == torch.__version__
    stamp = path.stat().st_mtime_ns
    assert exp.pretrain(spec, 0.5) == path and path.stat().st_mtime_ns == stamp                  # the notebooks' call reuses it
    packed = tmp_path / "packed" / "bpe_fraction_0.5.tar.gz"                                   # --pack: the model, archived to bring back
    assert [line.split(" ", 1)[1] for line in run.stdout.splitlines() if line.startswith("packed ")] == [str(packed)]
    there = tmp_path / "elsewhere"; shutil.copytree(exp.lm_dir / "tokenizers", there / "lm" / "tokenizers")
    with tarfile.open(packed) as t: t.extractall(there / "lm", filter="data")
    exp2 = LMExperiment.setup("en", "tiny", there, "cpu"); (spec2,) = exp2.specs(["BPE"])
    moved = exp2.run_dir(spec2, 0.5) / "pretrain" / "lm.pt"
    assert not (moved.parent / "checkpoint.pt").exists() and moved.read_bytes() == path.read_bytes()
    stamp2 = moved.stat().st_mtime_ns
    assert exp2.pretrain(spec2, 0.5) == moved and moved.stat().st_mtime_ns == stamp2             # unpacked elsewhere, reused, not retrained
    other = LMSpec("FACTORIZER", "FACTORIZER", tokenizers["factorizer"], tokenizers["factorizer"])
    with pytest.raises(ValueError, match="another tokenizer"): pretrain(other, exp.pretrain_setup, path.parent, fraction=0.5)
    with pytest.raises(ValueError, match="text_sha256"): pretrain(spec, exp.pretrain_setup, path.parent, fraction=1.0)
    wider = replace(exp.pretrain_setup, config=replace(exp.pretrain_setup.config, hidden=48))
    with pytest.raises(ValueError, match="model"): pretrain(spec, wider, path.parent, fraction=0.5)
    assert path.stat().st_mtime_ns == stamp                                                      # nothing retrained or deleted
