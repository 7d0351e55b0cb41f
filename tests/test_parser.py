"""The UD parser with every tokenizer of the project: one contract, as for the tokenizer protocol.

Whatever the family (triplet ids or single ids, lossless or not), the parser embeds, pools, scores and decodes
odd word forms (emoji, combining marks, CJK, an empty-looking form) into a tree with one root per sentence."""
import math

import pytest
import torch

from factorizer_nb.downstream.ud_data import check_tree, parse_conllu, syntactic_words
from factorizer_nb.downstream.parser import (FIELDS, LabelSet, Parser, ParserConfig, collate, encode_words, parser_loss,
                                              predict_batch, word_values)
from test_protocol import ADAPTERS, _make

CONLLU = """# text = The naïve café 🙂 works.
1\tThe\tthe\tDET\tDT\tDefinite=Def\t3\tdet\t_\t_
2\tnaïve\tnaïve\tADJ\tJJ\tDegree=Pos\t3\tamod\t_\t_
3\tcafé\tcafé\tNOUN\tNN\tNumber=Sing\t5\tnsubj\t_\t_
4\t🙂\t🙂\tSYM\tNFP\t_\t3\tdiscourse\t_\t_
5\tworks\twork\tVERB\tVBZ\tNumber=Sing\t0\troot\t_\tSpaceAfter=No
6\t.\t.\tPUNCT\t.\t_\t5\tpunct\t_\t_

# text = 日本語 e\u0301
1\t日本語\t日本語\tPROPN\tNNP\t_\t0\troot\t_\t_
2\te\u0301\te\u0301\tX\tFW\t_\t1\tdep\t_\t_

# text = _
1\t_\t_\tPUNCT\t.\t_\t0\troot\t_\t_

"""


@pytest.mark.parametrize("name", ADAPTERS)
def test_parser_on_every_tokenizer(name):
    tok = _make(name)
    sents = parse_conllu(CONLLU)
    labels = LabelSet.from_sentences(sents)
    forms = [[w["form"] for w in syntactic_words(s)] for s in sents]
    targets = [{**{f: labels.encode(f, word_values(s)[f]) for f in FIELDS}, "head": word_values(s)["head"]} for s in sents]
    batch = collate([encode_words(tok, f) for f in forms], tok.special_id("[PAD]"), targets)
    torch.manual_seed(0)
    model = Parser(tok, {f: labels.size(f) for f in FIELDS}, ParserConfig(embed_dim=8, lstm_dim=8, lstm_layers=2, arc_dim=8, label_dim=4))
    loss = parser_loss(model, batch, label_smoothing=0.1)["loss"]
    assert math.isfinite(loss.item())
    loss.backward()
    model.eval()
    for p, f in zip(predict_batch(model, [batch], labels, forms), forms):
        assert check_tree(p["head"]) is None and len(p["lemma"]) == len(f)
