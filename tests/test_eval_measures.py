"""A second implementation of the report's measures (issue #92): for one small tokenizer of each format, subwords per word
and words kept whole (each sentence encoded whole, pieces given to words by offsets) and boundary precision, recall and F1
(by frequency and per word type) are recomputed here by calling each library directly, and must equal what
`downstream.intrinsic.intrinsic_row` (the report's intrinsic table) gives, to 1e-9."""
import conllu, io, lzma
import pytest
import wordfreq
from fixtures import needs_data
from test_eval_loader import hf_bpe, hf_wordpiece, spm_model, tiktoken_file, pieces_fn, WORDS

SENTENCES = 40           # of en_ewt dev
GOLD_WORDS = 300         # of SIGMORPHON 2022 eng.word.dev, those with 2+ morphemes that spell the word


def read_sentences(path, n):
    "The first n sentences of a CoNLL-U file: its # text, and each surface word's span found in it left to right."
    out = []
    with lzma.open(path, "rt", encoding="utf-8") as f:
        for sent in conllu.parse_incr(f):
            forms, skip = [], 0
            for t in sent:
                if isinstance(t["id"], tuple):
                    if t["id"][1] == "-": forms.append(t["form"]); skip = t["id"][2]
                elif t["id"] > skip: forms.append(t["form"])
            text, pos, spans = sent.metadata["text"], 0, []
            for w in forms:
                pos = text.index(w, pos); spans.append((pos, pos + len(w))); pos += len(w)
            out.append((text, spans))
            if len(out) == n: return out


def read_gold(path, n):
    "(word, boundary offsets) of the first n entries whose 2+ morphemes concatenate to the word."
    out = []
    with lzma.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            word, seg = line.rstrip("\n").split("\t")[:2]
            morphs = seg.split(" @@")
            if len(morphs) < 2 or "".join(morphs) != word: continue
            cuts, pos = set(), 0
            for m in morphs[:-1]: pos += len(m); cuts.add(pos)
            out.append((word, cuts))
            if len(out) == n: return out


def char_spans(text, byte_spans):
    "Byte offsets of UTF-8 `text` as character offsets."
    at = {}
    pos = 0
    for k, ch in enumerate(text): at[pos] = k; pos += len(ch.encode("utf-8"))
    at[pos] = len(text)
    def char(b):
        while b not in at: b -= 1
        return at[b]
    return [(char(a), char(b)) for a, b in byte_spans]


class Direct:
    "One format's library, called directly: a text's piece spans, and a word's spans as the loader gives it alone."
    def __init__(self, kind, path):
        self.kind = kind
        if kind in ("hf_bpe", "wordpiece"):
            from tokenizers import Tokenizer
            self.tok = Tokenizer.from_file(str(path))
        elif kind.startswith("spm"):
            import sentencepiece as spm
            self.sp = spm.SentencePieceProcessor(model_file=str(path))
        elif kind == "tiktoken":
            import base64, tiktoken
            ranks = {base64.b64decode(t): int(r) for t, r in (l.split() for l in path.read_text().splitlines() if l)}
            from factorizer_nb.eval.loader import TIKTOKEN_PATTERN
            self.enc = tiktoken.Encoding("direct", pat_str=TIKTOKEN_PATTERN, mergeable_ranks=ranks, special_tokens={})

    def text_spans(self, text):
        if self.kind in ("hf_bpe", "wordpiece"): return list(self.tok.encode(text, add_special_tokens=False).offsets)
        if self.kind.startswith("spm"):
            return char_spans(text, [(p.begin, p.end) for p in self.sp.encode(text, out_type="proto").pieces])
        if self.kind == "tiktoken":
            out, pos = [], 0
            for i in self.enc.encode_ordinary(text):
                n = len(self.enc.decode_single_token_bytes(i)); out.append((pos, pos + n)); pos += n
            return char_spans(text, out)
        out, pos = [], 0                                     # the callable: each whitespace word, in 3-character chunks
        for w in text.split():
            pos = text.index(w, pos)
            out += [(pos + k, pos + min(k + 3, len(w))) for k in range(0, len(w), 3)]; pos += len(w)
        return out

    def unknown(self, text):
        "How many of a text's pieces are the format's own unknown token (tiktoken's bytes and the callable have none)."
        if self.kind in ("hf_bpe", "wordpiece"):
            unk = self.tok.token_to_id(self.tok.model.unk_token) if getattr(self.tok.model, "unk_token", None) else None
            return self.tok.encode(text, add_special_tokens=False).ids.count(unk) if unk is not None else 0
        if self.kind.startswith("spm"): return self.sp.encode(text).count(self.sp.unk_id())
        return 0

    def word_starts(self, word):
        "Where each piece of `word` starts, given alone (after a space, except a sentencepiece model with its dummy prefix)."
        if self.kind in ("spm_unigram", "callable"): return [a for a, _ in self.text_spans(word)]
        return [max(a - 1, 0) for a, _ in self.text_spans(" " + word)]


def direct_context(direct, sentences):
    """Pieces per word, the share of words kept whole (each piece given to the word it overlaps most) and the share of
    pieces that are unknown."""
    pieces = words = whole = unknown = 0
    for text, spans in sentences:
        owners = {k: [] for k in range(len(spans))}
        for s, e in direct.text_spans(text):
            a, b = s, e
            while a < b and text[a].isspace(): a += 1
            while b > a and text[b - 1].isspace(): b -= 1
            if b <= a:                                        # whitespace alone or zero width: the next character
                a = s
                while a < len(text) and text[a].isspace(): a += 1
                b = a + 1
            overlaps = [(min(b, we) - max(a, ws), k) for k, (ws, we) in enumerate(spans) if min(b, we) > max(a, ws)]
            for _, k in overlaps: owners[k].append((a, b))
            pieces += 1
        words += len(spans); unknown += direct.unknown(text)
        whole += sum(len(o) == 1 and o[0] == tuple(spans[k]) for k, o in owners.items())
    return pieces / words, whole / words, unknown / pieces


def direct_boundaries(direct, gold, weight):
    "Micro precision, recall and F1 of the pieces' starts inside each gold word against its gold cuts, each word weighted."
    tp = fp = fn = 0.0
    for word, cuts in gold:
        pred = {a for a in direct.word_starts(word)[1:] if 0 < a < len(word)}
        w = weight(word)
        tp += w * len(pred & cuts); fp += w * len(pred - cuts); fn += w * len(cuts - pred)
    p, r = tp / (tp + fp) if tp + fp else 0.0, tp / (tp + fn) if tp + fn else 0.0
    return p, r, 2 * p * r / (p + r) if p + r else 0.0


@pytest.fixture(scope="module")
def formats(tmp_path_factory):
    d = tmp_path_factory.mktemp("measures")
    hf_bpe().save(str(d / "bpe.json")); hf_wordpiece().save(str(d / "wp.json"))
    return {"hf_bpe": d / "bpe.json", "wordpiece": d / "wp.json", "spm_unigram": spm_model(d),
            "spm_bpe": spm_model(d, "bpe", dummy=False), "tiktoken": tiktoken_file(d), "callable": pieces_fn}


@needs_data
@pytest.mark.parametrize("kind", ["hf_bpe", "wordpiece", "spm_unigram", "spm_bpe", "tiktoken", "callable"])
def test_report_measures_match_a_direct_implementation(formats, kind):
    from factorizer_nb.core.sources import data_path
    from factorizer_nb.core.settings import load_settings
    from factorizer_nb.eval.loader import load_any
    from factorizer_nb.downstream.intrinsic import intrinsic_row
    S = load_settings("en")
    sentences = read_sentences(data_path(S["ud_eval"]), SENTENCES)
    gold = read_gold(data_path(S["morph"]), GOLD_WORDS)
    tok = load_any(formats[kind])
    if kind == "callable":                          # every piece seen when fitted: none is the protocol's [UNK]
        tok.fit(WORDS + [w for t, _ in sentences for w in t.split()] + [w for w, _ in gold])
    freq = lambda w: wordfreq.word_frequency(w, "en")
    row = intrinsic_row(tok, [t[a:b] for t, sp in sentences for a, b in sp], gold=gold, weight=freq, sentences=sentences)
    direct = Direct(kind, formats[kind])
    fertility, whole, unk = direct_context(direct, sentences)
    assert row["fertility"] == pytest.approx(fertility, abs=1e-9) and row["whole_word_share"] == pytest.approx(whole, abs=1e-9)
    assert row["unk_rate"] == pytest.approx(unk, abs=1e-9), (row["unk_rate"], unk)
    assert (unk > 0) == (kind == "wordpiece"), unk                 # the test WordPiece lacks characters of the text
    for suffix, weight in (("", freq), ("_types", lambda w: 1.0)):
        p, r, f = direct_boundaries(direct, gold, weight)
        got = [row[f"boundary_{m}{suffix}"] for m in ("precision", "recall", "f1")]
        assert got == pytest.approx([p, r, f], abs=1e-9), (suffix, got, (p, r, f))
    assert row["encoded"] == ("sentences, by whitespace word" if kind == "callable" else "sentences")
