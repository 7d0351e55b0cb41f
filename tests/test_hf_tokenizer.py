"""`FactorizerTokenizer` in the `datasets` stack: its fingerprint is the same in every process for the same vocabulary and
settings, so `Dataset.map` reuses its cache files; and the behaviours of transformers' common tokenizer tests that assume
integer ids, checked on triplets."""
import json, os, subprocess, sys, textwrap
import pytest
import torch
from factorizer_nb.hf.tokenizer import FactorizerTokenizer

HASHES = textwrap.dedent("""
    import json
    from datasets.fingerprint import Hasher
    from factorizer_nb.factorizer.tokenizer import Factorizer
    from factorizer_nb.hf.tokenizer import FactorizerTokenizer
    en = FactorizerTokenizer.from_pretrained("en")
    def made(**kw):
        added = kw.pop("added", None)
        tok = FactorizerTokenizer(factorizer=Factorizer(en.factorizer.vocab, **kw),
                                  pretrained_vocabulary=en.pretrained_vocabulary)
        if added: tok.add_tokens(added)
        return tok
    variants = dict(plain={}, alpha_split={"alpha_split": 0.5}, sampling={"sigma_sample": 0.3, "seed": 1},
                    seed={"sigma_sample": 0.3, "seed": 2}, added={"added": ["<city>"]})
    hashes = {k: Hasher.hash(made(**kw)) for k, kw in variants.items()}
    used = made(); used("The tokenizer was used once.")                           # using it changes no hashed state
    hashes["used"] = Hasher.hash(used)
    print(json.dumps(hashes))
""")


def _run(script: str, *args: str, cwd=None) -> str:
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    r = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, cwd=cwd,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.strip().splitlines()[-1]


@pytest.mark.slow
def test_fingerprint_same_in_fresh_processes():
    "Hasher.hash of a tokenizer: the same in two fresh processes, different when a setting or the added tokens differ."
    first, second = (json.loads(_run(HASHES)) for _ in range(2))
    assert first == second
    assert first["used"] == first["plain"]
    assert len({first[k] for k in ("plain", "alpha_split", "sampling", "seed", "added")}) == 5


MAP = textwrap.dedent("""
    import sys
    from pathlib import Path
    from datasets import load_from_disk
    from factorizer_nb.hf.tokenizer import FactorizerTokenizer
    data, calls = sys.argv[1], Path(sys.argv[2])
    tok = FactorizerTokenizer.from_pretrained("en")
    def tokenize(batch):
        with calls.open("a") as f: f.write("call\\n")
        return tok(batch["text"], truncation=True, max_length=32)
    mapped = load_from_disk(data).map(tokenize, batched=True, batch_size=4)
    print(mapped.cache_files[0]["filename"])
""")


@pytest.mark.slow
def test_dataset_map_reuses_cache_in_a_new_process(tmp_path):
    "Dataset.map over a file-backed dataset in two processes: the second reads the first's cache file, mapping nothing."
    from datasets import Dataset
    texts = [f"Sentence number {i} about the cat that sat on the mat." for i in range(10)]
    Dataset.from_dict({"text": texts}).save_to_disk(str(tmp_path / "data"))
    calls = tmp_path / "calls.log"
    first = _run(MAP, str(tmp_path / "data"), str(calls))
    n = len(calls.read_text().splitlines())
    assert n == 3 and first.startswith(str(tmp_path / "data"))                 # 10 texts in batches of 4
    second = _run(MAP, str(tmp_path / "data"), str(calls))
    assert second == first and len(calls.read_text().splitlines()) == n


@pytest.fixture(scope="module")
def en() -> FactorizerTokenizer:
    return FactorizerTokenizer.from_pretrained("en")


def test_padding_with_attention_mask(en):
    "The suite's padding checks, on triplets: [PAD] triplets where the attention mask is 0, on either side."
    texts = ["The tokenizer works.", "A much longer sentence than the first one, with more words."]
    for side in ("right", "left"):
        b = en(texts, padding=True, padding_side=side, return_tensors="pt")
        ids, mask = b["input_ids"], b["attention_mask"]
        assert ids.shape[:2] == mask.shape and ids.shape[2] == 3
        pad = torch.tensor(en.pad_token_id)
        assert ((ids == pad).all(-1) == (mask == 0)).all()
        short = mask[0].bool()
        assert (short.nonzero()[0] == 0).item() if side == "right" else not short[0]
        feats = [{"input_ids": en(t)["input_ids"], "attention_mask": [1] * (len(en(t)["input_ids"]) - 1) + [0]}
                 for t in texts]                                    # masks that already hold a 0 are extended
        padded = en.pad(feats, padding_side=side)["attention_mask"]
        n0, n1 = (len(f["input_ids"]) for f in feats)
        assert padded[0] == ([1] * (n0 - 1) + [0] + [0] * (n1 - n0) if side == "right" else
                             [0] * (n1 - n0) + [1] * (n0 - 1) + [0])
        assert en.decode(ids, skip_special_tokens=True) == [en.decode(en(t)["input_ids"], skip_special_tokens=True)
                                                            for t in texts]


def test_get_vocab(en):
    "The suite's get_vocab checks, on triplets: every token maps to its triplet and back; len(tok) counts them."
    vocab = en.get_vocab()
    assert len(vocab) == len(en)
    for token in list(vocab)[:200] + ["[PAD]", "[MASK]"]:
        assert en.convert_tokens_to_ids(token) == vocab[token]
        assert en.convert_ids_to_tokens(vocab[token]) == token
    en2 = FactorizerTokenizer.from_pretrained("en")
    en2.add_tokens(["<city>"])
    assert en2.get_vocab()["<city>"] == (261, 261, 261) and len(en2.get_vocab()) == len(en2) == len(en) + 1


def test_maximum_encoding_length(en):
    "The suite's maximum-length checks, on triplets: cut to max_length on either side, pairs by each strategy."
    text, pair = "the cat sat on the mat and the dog sat on the log " * 3, "a short question about it"
    full = en(text)["input_ids"]
    for side in ("right", "left"):
        en.truncation_side = side
        cut = en(text, max_length=10, truncation=True)["input_ids"]
        assert len(cut) == 10 and cut[0] == en.cls_token_id and cut[-1] == en.sep_token_id
        assert cut[1:-1] == (full[1:9] if side == "right" else full[-9:-1])
    en.truncation_side = "right"
    for strategy, (a, b) in {"longest_first": (text, pair), "only_first": (text, pair),
                             "only_second": (pair, text)}.items():
        ids = en(a, b, max_length=20, truncation=strategy)["input_ids"]
        assert len(ids) == 20 and ids.count(en.sep_token_id) == 2
    with pytest.raises(ValueError, match="cannot cut the second text"):
        en(text, pair, max_length=20, truncation="only_second")
    assert len(en(pair, text, max_length=20, truncation="only_second")["input_ids"]) == 20
    assert len(en(text, max_length=10, truncation=True, padding="max_length")["input_ids"]) == 10


def test_chat_template_saved(en, tmp_path):
    "A chat template survives save_pretrained (as chat_template.jinja) and tokenizes after loading."
    from transformers import AutoTokenizer
    tok = FactorizerTokenizer.from_pretrained("en")
    tok.chat_template = "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    tok.save_pretrained(tmp_path)
    assert (tmp_path / "chat_template.jinja").is_file()
    back = AutoTokenizer.from_pretrained(tmp_path)
    chat = [{"role": "user", "content": "Where did the cat sit?"}]
    assert back.chat_template == tok.chat_template
    assert back.apply_chat_template(chat, return_dict=False) == tok.apply_chat_template(chat, return_dict=False)


def test_sanitized_chat(en):
    "apply_chat_template(sanitize_control_tokens=True): a special token typed by the user is text; the template's stay."
    tok = FactorizerTokenizer.from_pretrained("en")
    tok.chat_template = "{% for m in messages %}[CLS] {{ m['content'] }}\n{% endfor %}"
    chat = [{"role": "user", "content": "say [MASK] please"}]
    plain = tok.apply_chat_template(chat, return_dict=False)
    safe = tok.apply_chat_template(chat, return_dict=False, sanitize_control_tokens=True)
    assert plain.count(tok.mask_token_id) == 1 and tok.mask_token_id not in safe
    assert plain[0] == safe[0] == tok.cls_token_id
    assert "[MASK]" in tok.decode(safe)
