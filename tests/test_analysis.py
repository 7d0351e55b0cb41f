"Boundary scoring properties and the Bostrom & Durrett notebook end to end (tiny profile)."
import json
import pandas as pd
import pytest
from hypothesis import given, strategies as st
from factorizer_nb.bpe_vs_unigram.analysis import boundaries, boundary_prf, surface_gold
from fixtures import ROOT, needs_data


@given(st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=6))
def test_boundaries_are_the_cumulative_piece_lengths(pieces):
    cuts, pos = set(), 0
    for p in pieces[:-1]: pos += len(p); cuts.add(pos)
    assert boundaries(pieces) == cuts


@given(st.lists(st.tuples(st.sets(st.integers(1, 9)), st.sets(st.integers(1, 9)), st.floats(0.1, 10)), min_size=1, max_size=5))
def test_prf_bounds_and_perfect_match(items):
    s = boundary_prf(items)
    assert all(0.0 <= s[k] <= 1.0 for k in s)
    perfect = boundary_prf([(g, g, w) for _, g, w in items])
    if any(g for _, g, _ in items): assert perfect == dict(precision=1.0, recall=1.0, f1=1.0)


def test_canonical_entries_that_do_not_concatenate_are_not_scored():
    gold, stats = surface_gold([("runs", ["run", "s"]), ("ran", ["run", "ed"])])
    assert gold == [("runs", {3})] and stats["not_surface"] == 1


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
    for ext in ("png", "pdf", "csv"): assert (out / f"bd_fig2_profiles_en_enwiki.{ext}").exists()
