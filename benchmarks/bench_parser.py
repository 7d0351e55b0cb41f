"""UD parser throughput per tokenizer on this machine, as ratios to byte-level BPE measured in the same run:
- training words/s: encoding the words, forward, backward and an AdamW step, on the `small` profile's model;
- inference sentences/s: `predict_treebank` (encoding, forward, single-root MST decoding, lemma rules) on en_ewt dev;
- with `--autocast`, training words/s of the first tokenizer under CPU bf16 autocast against fp32, alternated (the parser trains in fp32 on a CPU).
FACTORIZER uses `runs/en/vocab.dawg` when `make reproduce` has made it, else a unigram stand-in vocabulary of the same
format (placeholder triplets: the speed of the search and the embedding is the same, the quality is not).

    python benchmarks/bench_parser.py [--sentences 400] [--dev 400] [--size 8000] [--autocast] [--repeats 2]
"""
import argparse, math, time
from pathlib import Path
import torch
from factorizer_nb.core.settings import load_settings, run_dir
from factorizer_nb.core.corpora import training_counts, text_lines, WordList
from factorizer_nb.factorizer.tokenizer import Factorizer
from factorizer_nb.factorizer.vocab import unigram_standin_vocab
from factorizer_nb.downstream.ud_data import read_treebank
from factorizer_nb.downstream.parser import FIELDS, LabelSet, Parser, ParserConfig, collate, encode_words, parser_loss
from factorizer_nb.downstream.parser_training import ParserData, predict_treebank
from factorizer_nb.downstream.tokenizer_points import bpe_point, unigram_point, spm_bpe
from factorizer_nb.sage.tokenizer import SaGeTokenizer
from factorizer_nb.sage.corpus import initial_vocabulary


def train_words_per_second(tok, data, labels, cfg, batch_size=32, bf16=False):
    "Words per second of one training pass over `data` (encoding included), from a seeded model; `bf16`: under CPU bf16 autocast."
    torch.manual_seed(0)
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16)
    model = Parser(tok, {f: labels.size(f) for f in FIELDS}, cfg)
    opt = torch.optim.AdamW(model.parameters(), 1e-3)
    pad, words = tok.special_id("[PAD]"), sum(len(f) for f in data.forms)
    t0 = time.perf_counter()
    for k in range(0, len(data), batch_size):
        idx = range(k, min(k + batch_size, len(data)))
        batch = collate([encode_words(tok, data.forms[i]) for i in idx], pad, [data.targets[i] for i in idx])
        with autocast: loss = parser_loss(model, batch, 0.1)["loss"]
        opt.zero_grad(); loss.backward(); opt.step()
    return words / (time.perf_counter() - t0), model


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=400); ap.add_argument("--dev", type=int, default=400)
    ap.add_argument("--size", type=int, default=8000)
    ap.add_argument("--autocast", action="store_true", help="also time bf16 autocast against fp32 on the first tokenizer")
    ap.add_argument("--repeats", type=int, default=2, help="alternated fp32/bf16 passes with --autocast")
    a = ap.parse_args()
    S = load_settings("en", "small")
    counts = training_counts(WordList.from_settings(S), top_n=S["vq_top_words"])
    work = Path("runs/bench_parser"); work.mkdir(parents=True, exist_ok=True)
    vocab = run_dir("en") / "vocab.dawg"
    toks = {"byte-level BPE (HF)": bpe_point(counts, a.size, work).tokenizer,
            "FACTORIZER" + ("" if vocab.exists() else " (stand-in vocabulary)"):
                Factorizer(vocab if vocab.exists() else unigram_standin_vocab(counts, a.size), alpha_split=S["alpha_split"]),
            "Unigram LM (sentencepiece)": unigram_point(counts, a.size, work).tokenizer,
            "BPE (sentencepiece)": spm_bpe(counts, a.size, work),
            "SaGe-format (greedy, BPE pieces)": SaGeTokenizer(initial_vocabulary(list(text_lines(S["text"], limit=3000)), a.size))}
    train = read_treebank(S["parser_train"])[:a.sentences]
    dev = read_treebank(S["parser_dev"])[:a.dev]
    labels = LabelSet.from_sentences(train)
    data, cfg = ParserData.build(train, labels), ParserConfig.from_settings(S)
    print(f"torch threads: {torch.get_num_threads()}; {len(train)} training sentences ({sum(map(len, data.forms)):,} words), "
          f"{len(dev)} dev sentences; model: {cfg}")
    # warm-up, untimed: the first training pass and prediction pay one-off costs (allocator, imports, decoder set-up) that would
    # otherwise land on the reference row only
    first = next(iter(toks.values()))
    _, m = train_words_per_second(first, ParserData.build(train[:32], labels), labels, cfg)
    predict_treebank(m, first, dev[:32], labels)
    rows = []
    for name, tok in toks.items():
        wps, model = train_words_per_second(tok, data, labels, cfg)
        t0 = time.perf_counter(); predict_treebank(model, tok, dev, labels); sps = len(dev) / (time.perf_counter() - t0)
        rows.append((name, wps, sps))
    ref_w, ref_s = rows[0][1], rows[0][2]
    print(f"{'tokenizer':38} {'train words/s':>14} {'ratio':>6} {'infer sent/s':>13} {'ratio':>6}")
    for name, wps, sps in rows: print(f"{name:38} {wps:14,.0f} {wps / ref_w:6.2f} {sps:13,.1f} {sps / ref_s:6.2f}")
    if a.autocast:                                              # alternated, so a slow spell of the machine lands on both
        speeds = {False: [], True: []}
        for _ in range(a.repeats):
            for bf16 in (False, True): speeds[bf16].append(train_words_per_second(first, data, labels, cfg, bf16=bf16)[0])
        print(f"bf16 autocast ({next(iter(toks))}): train words/s fp32 {' '.join(f'{w:,.0f}' for w in speeds[False])}, "
              f"bf16 {' '.join(f'{w:,.0f}' for w in speeds[True])}; ratio {sum(speeds[True]) / sum(speeds[False]):.2f}")


if __name__ == "__main__":
    main()
