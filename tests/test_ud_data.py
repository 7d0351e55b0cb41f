"UD data: every lemma of every treebank in the data directory is recovered by its edit rule; trees and scoring."
import re
import pytest
from hypothesis import given, settings, strategies as st
from fixtures import needs_data
from factorizer_nb.core.sources import registry
from factorizer_nb.downstream.ud_data import apply_lemma_rule, check_tree, lemma_rule, read_treebank, syntactic_words

TREEBANKS = sorted(p for p in registry() if p.endswith(".conllu.xz"))


@needs_data
@pytest.mark.parametrize("rel", TREEBANKS)
def test_lemma_rules_recover_every_lemma(rel):
    sents = read_treebank(rel, check_trees=False)
    rules, n = set(), 0
    for s in sents:
        for w in syntactic_words(s):
            form, lemma = w["form"], w["lemma"] if w["lemma"] is not None else "_"
            r = lemma_rule(form, lemma)
            assert apply_lemma_rule(r, form) == lemma, (rel, form, lemma, r)
            rules.add(r); n += 1
    assert n > 0 and len(rules) <= n


@needs_data
@pytest.mark.parametrize("rel", [p for p in TREEBANKS if re.search(r"(en_ewt|gd_arcosg|tr_kenet|no_bokmaal)-ud-dev", p)])
def test_gold_trees_are_trees(rel):
    for s in read_treebank(rel):                     # read_treebank checks every sentence: one root, no cycle
        assert check_tree([w["head"] for w in syntactic_words(s)]) is None


@settings(max_examples=300, deadline=None)
@given(form=st.text(max_size=12), lemma=st.text(max_size=12))
def test_any_form_and_lemma(form, lemma):
    assert apply_lemma_rule(lemma_rule(form, lemma), form) == lemma
