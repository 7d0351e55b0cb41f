"""Masked-LM pretraining throughput per tokenizer on this machine, as ratios to sentencepiece BPE measured in the same run:
- subword tokens/s and words/s of full training steps (span masking, forward, backward, optimizer step) on a profile's model,
  so FACTORIZER's three-way output head (3 x 261 classes) stands against BPE's softmax over its whole vocabulary;
- peak resident memory of each run (a fresh process per tokenizer and autocast mode);
- bf16 autocast (fp32 master weights; the CPU's AVX-512 BF16 or AMX where it has it) against fp32, per model, in the same run;
- `torch.compile` of the encoder's layers (a mode with `+compile`, e.g. `off+compile`), its compilation in the untimed warm-up steps;
- subnormal floats flushed to zero (`+flush`, e.g. `off+flush`), as `lm.main` does on a CPU: a trained model's activations hold
  subnormals that fresh weights do not, so time this from a trained model's weights (`--checkpoint`);
- the paper profile's step (Table 6: 15 x 768, 32,768 x 128 tokens): an ESTIMATE from the FLOPs this machine reached, not a measurement.
FACTORIZER uses `runs/en/vocab.dawg` when `make reproduce` has made it, else a unigram stand-in vocabulary (placeholder triplets: the
same output head and search, not the same quality).

    python benchmarks/bench_lm.py [--profile small] [--steps 6] [--size 8000] [--autocast off bf16 off+compile] [--kinds bpe factorizer factorizer_12l]
    python benchmarks/bench_lm.py --profile cpu --autocast off off+flush --checkpoint runs/en-cpu/lm/bpe/full/pretrain   # one trained model
"""
import argparse, json, resource, subprocess, sys, time
from pathlib import Path

H100_BF16_DENSE = 989e12            # NVIDIA's H100 SXM dense bf16 peak, FLOP/s
ASSUMED_MFU = 0.35                  # an assumed model-FLOPs utilisation for the GPU estimate


def flops_per_token(layers: int, hidden: int, ff: int, seq_len: int, out_classes: int) -> float:
    """Training FLOPs per token (forward + backward = 3 x forward): matrix products of the layers, attention, and the output head counted on
    every token, although only the masked 15% go through it (an over-count that weighs most on BPE's large softmax)."""
    per_layer = 2 * (3 * hidden * hidden + hidden * hidden + 3 * hidden * ff) + 2 * 2 * seq_len * hidden
    head = 2 * (hidden * hidden + hidden * out_classes)
    return 3 * (layers * per_layer + head)


WARMUP_STEPS = 2                    # untimed steps first (the first compiles where a mode asks for torch.compile)


MODE_FLAGS = ("compile", "flush")


def one(kind: str, profile: str, steps: int, size: int, mode: str = "off", overrides: dict | None = None, checkpoint: str | None = None) -> dict:
    "Run in a child: time `steps` training steps of one tokenizer's model under `mode` (an autocast mode, `+compile` to compile the layers, `+flush` to flush subnormals); from `checkpoint`'s tokenizer and weights if given; print a JSON line."
    autocast, *flags = mode.split("+")
    if unknown := set(flags) - set(MODE_FLAGS): raise ValueError(f"unknown mode {mode!r}: an autocast mode, then any of +{' +'.join(MODE_FLAGS)}")
    import numpy as np, torch
    if "flush" in flags: torch.set_flush_denormal(True)         # before the first parallel op: every thread inherits it
    from factorizer_nb.core.protocol import load_tokenizer
    from factorizer_nb.core.settings import load_settings, run_dir
    from factorizer_nb.core.corpora import training_counts, WordList
    from factorizer_nb.factorizer.tokenizer import Factorizer
    from factorizer_nb.factorizer.vocab import unigram_standin_vocab
    from factorizer_nb.downstream.tokenizer_points import spm_bpe
    from factorizer_nb.downstream.lm.model import LMConfig, MaskedLM
    from factorizer_nb.downstream.lm.data import pack, pad_mask, LMText
    from factorizer_nb.downstream.lm.training import LMTraining, make_optimizer, mlm_loss, lm_autocast
    S = {**load_settings("en", profile), **(overrides or {})}
    counts = training_counts(WordList.from_settings(S), top_n=S["vq_top_words"])
    vocab = run_dir("en") / "vocab.dawg"
    state = None
    if checkpoint:                                               # a trained model: its tokenizer, layers and weights
        d = Path(checkpoint)
        tok = load_tokenizer(d / "tokenizer.tok")
        state = torch.load(d / ("lm.pt" if (d / "lm.pt").exists() else "checkpoint.pt"), map_location="cpu", weights_only=True)["model"]
        extra = len({k.split(".")[1] for k in state if k.startswith("blocks.")}) - int(S["lm_layers"])
    elif kind == "bpe": tok, extra = spm_bpe(counts, size, Path("runs/bench_lm")), 0
    else:
        tok = Factorizer(vocab if vocab.exists() else unigram_standin_vocab(counts, size), alpha_split=S["alpha_split"])
        extra = int(S["lm_extra_layers"]) if kind == "factorizer" else 0
    cfg, t = LMConfig.from_settings(S, extra), LMTraining.from_settings(S)
    texts = LMText.from_settings(S).corpus()[0][:4000]
    t0 = time.perf_counter()
    rows = torch.from_numpy(pack(tok.encode_ids_batch(texts), t.seq_len, *(tok.special_id(x) for x in ("[CLS]", "[SEP]", "[PAD]"))))
    encode_s = time.perf_counter() - t0
    words = sum(len(p.split()) for p in texts)
    subwords_per_word = sum(len(x) for x in tok.encode_ids_batch(texts[:500])) / sum(len(p.split()) for p in texts[:500])
    torch.manual_seed(0)
    model = MaskedLM(tok, cfg)
    if state is not None: model.load_state_dict(state)
    if "compile" in flags:
        for block in model.blocks: block.compile()
    opt = make_optimizer(model, t)
    times, tokens = [], 0
    for s in range(steps + WARMUP_STEPS):                        # the first steps warm up (and compile) and are not timed
        batch = rows[torch.randint(len(rows), (t.micro_batch,))]
        t1 = time.perf_counter()
        with lm_autocast("cpu", autocast): loss, _ = mlm_loss(model, batch, tok, t.mask_p, np.random.default_rng(s))
        opt.zero_grad(); loss.backward(); opt.step()
        if s >= WARMUP_STEPS: times.append(time.perf_counter() - t1); tokens += int(pad_mask(batch, tok.special_id("[PAD]")).sum())
    params = sum(p.numel() for p in model.parameters())
    classes = (tok.embedding_rows * 3) if tok.id_shape else tok.embedding_rows
    fl = flops_per_token(cfg.layers, cfg.hidden, cfg.ff, t.seq_len, classes)
    secs = sum(times)
    return dict(kind=kind, tokenizer=tok.name, layers=cfg.layers, params=params, output_classes=classes, tokens_per_s=tokens / secs,
                words_per_s=tokens / secs / subwords_per_word, subwords_per_word=subwords_per_word, flops_per_s=fl * tokens / secs,
                encode_words_per_s=words / encode_s, peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                threads=torch.get_num_threads(), autocast=mode, final_loss=float(loss))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="small"); ap.add_argument("--steps", type=int, default=6); ap.add_argument("--size", type=int, default=8000)
    ap.add_argument("--autocast", nargs="+", default=["off", "bf16"], help="autocast modes to time, +compile to compile the layers, +flush to flush subnormals (the first is the reference)")
    ap.add_argument("--checkpoint", default=None, help="a pretraining directory (tokenizer.tok, lm.pt or checkpoint.pt): time its trained model instead of fresh ones")
    ap.add_argument("--kinds", nargs="+", default=["bpe", "factorizer", "factorizer_12l"], choices=["bpe", "factorizer", "factorizer_12l"],
                    help="models to time (bpe, the reference, first)")
    ap.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="settings over the profile's (e.g. lm_hidden=256 lm_ff=683 lm_heads=4)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        kind, mode = a.child.split(":", 1)
        from factorizer_nb.core.settings import _convert
        overrides = {k: _convert(v) for k, v in (kv.split("=", 1) for kv in a.set)}
        print(json.dumps(one(kind, a.profile, a.steps, a.size, mode, overrides, a.checkpoint))); return
    if a.checkpoint: a.kinds = ["bpe"]                           # one model: the checkpoint's, whatever its tokenizer
    runs = {}
    for mode in a.autocast:
        for kind in ["bpe"] + [k for k in a.kinds if k != "bpe"]:       # a fresh process each, for a clean peak memory
            out = subprocess.run([sys.executable, __file__, "--child", f"{kind}:{mode}", "--profile", a.profile, "--steps", str(a.steps),
                                  "--size", str(a.size), *(["--checkpoint", a.checkpoint] if a.checkpoint else []), "--set", *a.set],
                                 capture_output=True, text=True, check=True)
            runs[kind, mode] = json.loads(out.stdout.strip().splitlines()[-1])
    res = {k: r for (k, m), r in runs.items() if m == a.autocast[0]}
    ref = res["bpe"]
    print(f"profile {a.profile!r}{' with ' + ' '.join(a.set) if a.set else ''}, {a.steps} timed steps each, {ref['threads']} threads; ratios to sentencepiece BPE in this run")
    print("| model | layers | parameters | output classes | tokens/s | ratio | words/s | ratio | subwords/word | peak RSS MB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    names = {"bpe": "BPE (sentencepiece)", "factorizer": "FACTORIZER (+ extra layers)", "factorizer_12l": "FACTORIZER (no extra layers)"}
    if a.checkpoint: names["bpe"] = f"trained model in {a.checkpoint}"
    for k, r in res.items():
        print(f"| {names[k]} | {r['layers']} | {r['params']:,} | {r['output_classes']:,} | {r['tokens_per_s']:,.0f} | "
              f"{r['tokens_per_s'] / ref['tokens_per_s']:.2f} | {r['words_per_s']:,.0f} | {r['words_per_s'] / ref['words_per_s']:.2f} | "
              f"{r['subwords_per_word']:.2f} | {r['peak_rss_mb']:,.0f} |")
    if len(a.autocast) > 1:
        print(f"\nautocast against {a.autocast[0]!r} (same model, same steps, this run)\n| model | mode | tokens/s | ratio |\n|---|---|---:|---:|")
        for (k, m), r in runs.items():
            print(f"| {names[k]} | {m} | {r['tokens_per_s']:,.0f} | {r['tokens_per_s'] / runs[k, a.autocast[0]]['tokens_per_s']:.2f} |")
    from factorizer_nb.core.settings import load_settings
    P = load_settings("en", "paper")
    cpu = max(r["flops_per_s"] for r in res.values())
    for name, layers, classes in (("BPE, 12 layers", P["lm_layers"], P["lm_bpe_size"] + 5),
                                  ("FACTORIZER, 15 layers", P["lm_layers"] + P["lm_extra_layers"], 3 * 261)):
        fl = flops_per_token(layers, P["lm_hidden"], P["lm_ff"], P["lm_seq_len"], classes) * P["lm_batch_size"] * P["lm_seq_len"]
        print(f"ESTIMATE, paper profile ({name}): {fl / 1e15:.1f} PFLOP per step; on this CPU at the {cpu / 1e9:.1f} GFLOP/s measured "
              f"above: {fl / cpu / 3600:.1f} hours per step ({fl / cpu * P['lm_steps'] / 3600 / 24 / 365:,.0f} years for "
              f"{P['lm_steps']:,} steps); on one H100 at an assumed {ASSUMED_MFU:.0%} of its bf16 peak: {fl / (H100_BF16_DENSE * ASSUMED_MFU):.1f} s "
              f"per step ({fl / (H100_BF16_DENSE * ASSUMED_MFU) * P['lm_steps'] / 3600:,.0f} GPU-hours). Not measured.")


if __name__ == "__main__": main()
