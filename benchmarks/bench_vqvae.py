"""VQ-VAE throughput on this machine, each ratio measured in one run:
- training words/s of the profile before tuning (issue #9: one padded batch of 128 words per step, ASAM on every step,
  the 2 x 96 model) against the same shape with length-sorted chunks, and against the tuned profile as `settings.ini` has it;
- an ASAM step against a plain AdamW step (`asam=False`: no ascent, no second forward and backward);
- vocabulary-inference triplets/s: greedy decoding with the key/value cache against recomputing the prefix;
- sampling words/s at the paper's batch (4,096 words): `WordSampler.sample` (cuts as tensor ops) against cutting word by word
  in Python, as it did before (on a GPU the sampler runs on the host, in every step).
All training steps go through `training.train_step`.

With `--fast`, only the fast step (issue #64, `factorizer.fast_step`): each `FastPath` of the ladder (today's step, then one change
added at a time, then each compile mode) timed from a fresh state at the profile's shapes on `--device`, with seconds a step, word
samples a second, achieved TFLOP/s (from `vq_training_flops`), its ratio to today's step, and the share of a plain matmul's rate
measured in the same run (bf16 on CUDA, fp32 on a CPU).

    python benchmarks/bench_vqvae.py [--profile small] [--steps 30] [--triplets 4096]
    python benchmarks/bench_vqvae.py --fast --profile paper --device cuda [--steps 20] [--compile default,reduce-overhead]
"""
import argparse, dataclasses, time
import torch
from factorizer_nb.core.settings import load_settings
from factorizer_nb.core.corpora import training_counts, WordList
from factorizer_nb.factorizer.training import VQConfig, WordSampler, model_from_config, new_state, train_step
from factorizer_nb.factorizer.vocab_inference import greedy_decode
from factorizer_nb.factorizer.vqvae import END_TOKEN, MAX_TOKENS, NUM_CODEBOOKS, PAD_TOKEN
from factorizer_nb.factorizer.fast_step import FastPath
from factorizer_nb.infra.paper_run import matmul_tflops, time_steps


# the small profile before issue #9's tuning (the model shape is the same as today's small profile's)
BEFORE = dict(vq_batch_size=128, vq_length_buckets=1, vq_asam_every=1, vq_layers=2, vq_hidden=96, vq_ff_intermediate=256, vq_heads=2)


def words_per_second(cfg, sampler, steps, use_asam=True):
    "Training words per second from a fresh seeded state (after two warm-up steps), with or without ASAM."
    st = new_state(cfg); st.model.train()
    for _ in range(2): train_step(st, sampler, cfg, asam=use_asam)
    t0 = time.perf_counter()
    for _ in range(steps): train_step(st, sampler, cfg, asam=use_asam)
    return steps * cfg.batch_size / (time.perf_counter() - t0)


@torch.no_grad()
def decode_without_cache(model, triplets, max_tokens=MAX_TOKENS):
    "Reference: greedy decoding that recomputes the whole prefix at every step."
    z = torch.stack([cb.embed[triplets[:, k]] for k, cb in enumerate(model.codebooks)], 1)
    toks = torch.zeros(len(triplets), 0, dtype=torch.long)
    for _ in range(max_tokens + 1):
        logits, _ = model.decoder_states(z, toks)
        nxt = logits[:, -1].argmax(-1)
        toks = torch.cat([toks, nxt[:, None]], 1)
        if (toks == END_TOKEN).any(1).all(): break
    return toks


def sample_word_by_word(ws: WordSampler, batch_size: int, g: torch.Generator) -> torch.Tensor:
    "Reference: the sampler's draws, each word cut and padded one at a time."
    idx = torch.multinomial(ws.p_sample, batch_size, replacement=True, generator=g)
    keep = (torch.rand(batch_size, generator=g) < ws.p_keep[idx]).tolist()
    out = torch.full((batch_size, MAX_TOKENS), PAD_TOKEN, dtype=torch.long)
    for r, (i, (u, v)) in enumerate(zip(idx.tolist(), torch.rand(batch_size, 2, generator=g).tolist())):
        t = ws.tokens[i, :ws.lengths[i]].tolist(); n = len(t)
        if not keep[r] and n > 2:
            a = int(u * n); b = min(n, a + 1 + int(v * (n - a))); t = t[a:n - 1 if (a, b) == (0, n) else b]
        out[r, :len(t)] = torch.tensor(t)
    return out


def fast_paths(profile: str, device: str, steps: int, compile_modes: list[str]):
    "Print the fast step's ladder of paths at `profile`'s shapes (one padded chunk) on `device`."
    S = load_settings("en", profile)
    cfg = dataclasses.replace(VQConfig.from_settings(S), length_buckets=1)
    sampler = WordSampler(training_counts(WordList.from_settings(S), top_n=cfg.top_words))
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    rate = matmul_tflops(device, n=8192 if device.startswith("cuda") else 1024, dtype=dtype)
    rows = time_steps(cfg, sampler, device, FastPath.ladder(compile_modes), steps=steps, matmul=rate)
    print(f"VQ-VAE step, profile {profile!r} ({cfg.layers} x {cfg.hidden}, batch {cfg.batch_size}, one chunk) on {device}; "
          f"plain {dtype} matmul {rate:.1f} TFLOP/s")
    for r in rows:
        if r["error"]: print(f"  {r['path']:<60} failed: {r['error']}"); continue
        print(f"  {r['path']:<60} {r['seconds_per_step']:.4f} s/step {r['words_per_second']:10,.0f} words/s "
              f"{r['tflops']:7.2f} TFLOP/s ({100 * r['share_of_matmul']:.1f}% of the matmul)  ratio {r['speedup']:.2f}  "
              f"(warm-up {r['warmup_seconds']:.0f} s)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="small"); ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--triplets", type=int, default=4096)
    ap.add_argument("--fast", action="store_true", help="time the fast step's paths only")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--compile", default="default,reduce-overhead", help="with --fast: compile modes, comma-separated")
    a = ap.parse_args()
    if a.fast: return fast_paths(a.profile, a.device, a.steps, [m for m in a.compile.split(",") if m])
    S = load_settings("en", a.profile)
    cfg = VQConfig.from_settings(S)
    sampler = WordSampler(training_counts(WordList.from_settings(S), top_n=cfg.top_words))
    before = VQConfig.from_settings({**S, **BEFORE})
    chunked = VQConfig.from_settings({**S, **BEFORE, "vq_length_buckets": cfg.length_buckets})
    ref = words_per_second(before, sampler, a.steps)
    print(f"training words/s, {torch.get_num_threads()} threads, {a.steps} steps each (ratios to the first line):")
    for label, c in ((f"before tuning: {before.layers}x{before.hidden}, batch {before.batch_size}, one padded batch, ASAM every step", before),
                     (f"same shape, {chunked.length_buckets} length-sorted chunks", chunked),
                     (f"profile {a.profile!r}: {cfg.layers}x{cfg.hidden}, batch {cfg.batch_size}, {cfg.length_buckets} chunks, "
                      f"ASAM every {cfg.asam_every or 'never'}", cfg)):
        w = ref if c is before else words_per_second(c, sampler, a.steps)
        print(f"  {label:<95} {w:10,.0f} words/s   ratio {w / ref:.2f}")
    plain, asam = words_per_second(cfg, sampler, a.steps, False), words_per_second(dataclasses.replace(cfg, asam_every=1), sampler, a.steps)
    print(f"ASAM on every step against plain AdamW, profile {a.profile!r}:")
    print(f"  AdamW step (reference)   {plain:10,.0f} words/s")
    print(f"  ASAM + AdamW step        {asam:10,.0f} words/s   ratio {asam / plain:.2f}")
    model = model_from_config(cfg).eval()
    for cb in model.codebooks: cb.initialized.fill_(True)
    trip = torch.randint(0, 256, (a.triplets, NUM_CODEBOOKS), generator=torch.Generator().manual_seed(0))
    t0 = time.perf_counter(); decode_without_cache(model, trip); ref = a.triplets / (time.perf_counter() - t0)
    t0 = time.perf_counter(); greedy_decode(model, trip, batch_size=a.triplets, progress=False); ours = a.triplets / (time.perf_counter() - t0)
    print(f"vocabulary inference, {a.triplets} triplets (untrained weights: every sequence runs to the length limit):")
    print(f"  greedy, prefix recomputed (reference) {ref:10,.0f} triplets/s")
    print(f"  greedy, key/value cache               {ours:10,.0f} triplets/s   ratio {ours / ref:.2f}")
    rates = {}
    for name, fn in (("word by word", sample_word_by_word), ("tensor ops", WordSampler.sample)):
        g = torch.Generator().manual_seed(0); fn(sampler, 4096, g)
        t0 = time.perf_counter()
        for _ in range(10): fn(sampler, 4096, g)
        rates[name] = 10 * 4096 / (time.perf_counter() - t0)
    print(f"sampling 4,096 words a batch from the {len(sampler):,}-word list:")
    print(f"  word by word (reference) {rates['word by word']:10,.0f} words/s")
    print(f"  tensor ops               {rates['tensor ops']:10,.0f} words/s   ratio {rates['tensor ops'] / rates['word by word']:.2f}")


if __name__ == "__main__":
    main()
