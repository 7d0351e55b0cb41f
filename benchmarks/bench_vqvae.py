"""VQ-VAE throughput on this machine: training words/s (ASAM step against a plain AdamW step) and vocabulary-inference
triplets/s (greedy decoding with the key/value cache against recomputing the prefix), each ratio measured in one run.
Both training steps go through `training.train_step`; the plain one passes `asam=False` (no ascent, no second
forward and backward), everything else in the step (clipping, schedule, codebook and weight EMA) is the same.

    python benchmarks/bench_vqvae.py [--profile small] [--steps 30] [--triplets 4096]
"""
import argparse, time
import torch
from factorizer_nb.core.data import load_settings, word_counts
from factorizer_nb.factorizer.training import VQConfig, WordSampler, model_from_config, new_state, train_step
from factorizer_nb.factorizer.vocab_inference import greedy_decode
from factorizer_nb.factorizer.vqvae import END_TOKEN, MAX_TOKENS, NUM_CODEBOOKS


def steps_per_second(cfg, sampler, steps, use_asam):
    "Training steps per second from a fresh seeded state, with or without the ASAM ascent."
    st = new_state(cfg); st.model.train()
    t0 = time.perf_counter()
    for _ in range(steps): train_step(st, sampler, cfg, asam=use_asam)
    return steps / (time.perf_counter() - t0)


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="small"); ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--triplets", type=int, default=4096)
    a = ap.parse_args()
    S = load_settings("en", a.profile)
    cfg = VQConfig.from_settings(S)
    sampler = WordSampler(word_counts(S["freq"], top_n=cfg.top_words))
    plain, asam = steps_per_second(cfg, sampler, a.steps, False), steps_per_second(cfg, sampler, a.steps, True)
    print(f"training, profile {a.profile!r} ({cfg.layers} layers, hidden {cfg.hidden}, batch {cfg.batch_size}), "
          f"{torch.get_num_threads()} threads, {a.steps} steps:")
    print(f"  AdamW step (reference)   {plain * cfg.batch_size:10,.0f} words/s")
    print(f"  ASAM + AdamW step        {asam * cfg.batch_size:10,.0f} words/s   ratio {asam / plain:.2f}")
    model = model_from_config(cfg).eval()
    for cb in model.codebooks: cb.initialized.fill_(True)
    trip = torch.randint(0, 256, (a.triplets, NUM_CODEBOOKS), generator=torch.Generator().manual_seed(0))
    t0 = time.perf_counter(); decode_without_cache(model, trip); ref = a.triplets / (time.perf_counter() - t0)
    t0 = time.perf_counter(); greedy_decode(model, trip, batch_size=a.triplets, progress=False); ours = a.triplets / (time.perf_counter() - t0)
    print(f"vocabulary inference, {a.triplets} triplets (untrained weights: every sequence runs to the length limit):")
    print(f"  greedy, prefix recomputed (reference) {ref:10,.0f} triplets/s")
    print(f"  greedy, key/value cache               {ours:10,.0f} triplets/s   ratio {ours / ref:.2f}")


if __name__ == "__main__":
    main()
