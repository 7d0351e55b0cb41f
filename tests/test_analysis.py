"Boundary scoring properties and the Bostrom & Durrett notebook end to end (tiny profile)."
import json
import pandas as pd
import pytest
from hypothesis import assume, given, strategies as st
from factorizer_nb.bpe_vs_unigram.analysis import boundaries, boundary_prf, surface_gold, word_boundary_scores
from fixtures import ROOT, needs_data
from factorizer_nb.core.claims import data_file


@pytest.mark.parametrize("pieces, expected", [
    (["un", "break", "able"], {2, 7}),
    (["un", "believ", "able"], {2, 8}),
    (["a", "b", "c", "d"], {1, 2, 3}),
    (["unbreakable"], set()),                # a single piece has no internal boundary
    ([], set()),
    (["", "word"], set()),                    # empty pieces add no boundary at either end
    (["word", ""], set()),
    (["ab", "", "c"], {2}),
    (["▁un", "do"], {3}),                     # a marker counts as written ...
    (["▁", "un", "do"], {1, 3}),
])
def test_boundaries_by_hand(pieces, expected):
    assert boundaries(pieces) == expected


def test_word_boundary_scores_ignore_the_word_start_marker():
    gold = [("undo", {2})]
    assert word_boundary_scores(lambda w: ["▁un", "do"], gold, lambda w: 1.0)["f1"] == 1.0       # ... unless the caller strips it
    assert word_boundary_scores(lambda w: ["▁", "un", "do"], gold, lambda w: 1.0)["f1"] == 1.0
    assert word_boundary_scores(lambda w: ["▁u", "ndo"], gold, lambda w: 1.0)["f1"] == 0.0


@given(st.lists(st.text(min_size=0, max_size=4), max_size=6))
def test_boundaries_cut_the_word_back_into_its_pieces(pieces):
    word, cuts = "".join(pieces), sorted(boundaries(pieces))
    assert all(0 < b < len(word) for b in cuts)
    assert [word[a:b] for a, b in zip([0] + cuts, cuts + [len(word)])] == ([p for p in pieces if p] or [""])


def test_prf_by_hand():
    assert boundary_prf([({2, 8}, {2}, 1.0)]) == pytest.approx(dict(precision=0.5, recall=1.0, f1=2 / 3))
    assert boundary_prf([({2}, {2, 8}, 3.0), ({1}, {4}, 1.0)]) == pytest.approx(dict(precision=0.75, recall=3 / 7, f1=6 / 11))
    assert boundary_prf([]) == dict(precision=0.0, recall=0.0, f1=0.0)


@given(st.lists(st.tuples(st.sets(st.integers(1, 9)), st.sets(st.integers(1, 9)), st.floats(0.1, 10)), min_size=1, max_size=5))
def test_prf_bounds(items):
    s = boundary_prf(items)
    assert all(0.0 <= s[k] <= 1.0 for k in s)


@given(st.lists(st.tuples(st.sets(st.integers(1, 9)), st.floats(0.1, 10)), min_size=1, max_size=5))
def test_prf_perfect_match(items):
    assume(any(g for g, _ in items))
    assert boundary_prf([(g, g, w) for g, w in items]) == dict(precision=1.0, recall=1.0, f1=1.0)


def test_canonical_entries_that_do_not_concatenate_are_not_scored():
    gold, stats = surface_gold([("runs", ["run", "s"]), ("ran", ["run", "ed"])])
    assert gold == [("runs", {3})] and stats["not_surface"] == 1


@pytest.mark.slow
@needs_data
def test_bpe_vs_unigram_notebook_tiny(tmp_path):
    from factorizer_nb.infra.reproduce import run_notebooks
    res = run_notebooks(["en"], "tiny", [ROOT / "nbs/paper/31_bpe_vs_unigram.ipynb"], runs_dir=tmp_path / "runs",
                        parameters=dict(work_dir=str(tmp_path / "none"), figures_dir=str(tmp_path / "figures")))
    assert res == {("en", "31_bpe_vs_unigram.ipynb"): None}
    out = tmp_path / "figures"
    table = pd.read_csv(out / "bd_table3_comparison_en_enwiki.csv")
    assert list(table.tokenizer) == ["BPE", "Unigram LM", "FACTORIZER", "SaGe"]
    scored = table[table.tokenizer.isin(["BPE", "Unigram LM"])]
    assert scored.f1.between(0, 1).all() and (scored.units_per_word >= 1).all()
    assert table.set_index("tokenizer").loc["SaGe", "status"].startswith("no SaGe vocabulary")
    assert "CELEX2" in json.loads((out / "bd_table3_comparison_en_enwiki.manifest.json").read_text())["caption"]
    for ext in ("png", "pdf"): assert (out / f"bd_fig2_profiles_en_enwiki.{ext}").exists()
    assert data_file(out, "bd_fig2_profiles_en_enwiki") is not None                # .csv, or .csv.xz when large
