"Smoke run on one device (argument: cuda or cpu; docs/development.md): the from-scratch parser and the LM's pretraining, fine-tuning and pseudo-perplexity on one device, tiny profile."
import json, os, sys, time, traceback
from pathlib import Path
DEV = sys.argv[1] if len(sys.argv) > 1 else "cuda"
OUT = Path(os.environ.get("OUT", "/tmp/smoke_out")); OUT.mkdir(parents=True, exist_ok=True)
W = Path(f"/tmp/smoke_{DEV}"); res = {}
def part(name, fn):
    t = time.perf_counter()
    try: res[name] = dict(ok=True, result=fn())
    except Exception: res[name] = dict(ok=False, error=traceback.format_exc()[-4000:])
    res[name]["seconds"] = time.perf_counter() - t
    (OUT / f"smoke_{DEV}.json").write_text(json.dumps(res, indent=1, default=str)); print(name, res[name], flush=True)
from factorizer_nb.core.settings import load_settings
from factorizer_nb.downstream.experiments import ParserExperiment
from factorizer_nb.downstream.tokenizer_points import bpe_point
from factorizer_nb.downstream.lm.data import LMText
from factorizer_nb.downstream.lm.training import load_lm
from factorizer_nb.downstream.lm.evaluation import pseudo_perplexity
from factorizer_nb.downstream.lm.finetune import LMSpecsConfig, lm_specs, finetune_build, finetune_training
from factorizer_nb.downstream.lm.cli import PretrainSetup, pretrain
from factorizer_nb.downstream.parser_training import train_parser
exp = ParserExperiment.setup("en", "tiny", W / "parser", DEV)
part("parser", lambda: exp.grid([bpe_point(exp.counts(), 500, exp.tok_dir)], workers=1, progress=False)[["family", "setting", "LAS", "Lemmas"]].to_dict("records"))
S = load_settings("en", "tiny")
spec = lm_specs(LMSpecsConfig.from_settings(S), W / "none", exp.counts(), W / "lm", names=["BPE"])[0]
state = {}
def lm():
    state["p"] = p = pretrain(spec, PretrainSetup.from_settings(S), W / "lm" / "bpe", device=DEV)
    _, held = LMText.from_settings(S).corpus()
    return pseudo_perplexity(load_lm(p, spec.tokenizer, DEV), spec.eval_tokenizer, held[:20], seq_len=int(S["lm_seq_len"]))
part("lm pretraining and pseudo-perplexity", lm)
def finetune():
    build, build_id = finetune_build(state["p"])
    return train_parser(spec.tokenizer, exp.train, exp.dev, W / "ft", config=exp.config, training=finetune_training(S), device=DEV,
                        progress=False, build=build, build_id=build_id)
part("lm fine-tuning", finetune)
