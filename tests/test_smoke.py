"End to end: the papermill demo notebook on the tiny profile writes its figure, data and manifest."
import json, shutil
import pandas as pd
import pytest
from fixtures import ROOT, needs_data
from factorizer_nb.core.claims import data_file


@needs_data
def test_tokenizer_demo_notebook(tmp_path):
    from factorizer_nb.infra.reproduce import run_notebooks
    res = run_notebooks(["gd"], "tiny", [ROOT / "nbs/paper/00_tokenizer_demo.ipynb"], runs_dir=tmp_path / "runs",
                        parameters=dict(figures_dir=str(tmp_path / "figures")))
    assert res == {("gd", "00_tokenizer_demo.ipynb"): None}
    out = tmp_path / "figures"
    for ext in ("png", "pdf", "csv", "manifest.json"):
        assert (out / f"standin_splits_per_word_gd.{ext}").stat().st_size > 0
    df = pd.read_csv(out / "standin_splits_per_word_gd.csv")
    ours = df[df.alpha_split.notna()].sort_values("alpha_split")
    assert (ours.subwords_per_word.diff().dropna() <= 1e-12).all()      # more alpha, never more subwords
    assert (df.subwords_per_word >= 1).all()
    m = json.loads((out / "standin_splits_per_word_gd.manifest.json").read_text())
    assert "Stand-in" in m["caption"] and "spell-checker" in m["caption"]
    assert m["data"]["ud/gd_arcosg-ud-dev.conllu.xz"] and m["settings"]["lang"] == "gd"


@pytest.mark.slow                      # the main job's notebooks end to end: about 160 s of one core
@needs_data
def test_factorizer_pipeline_notebooks_tiny(tmp_path, monkeypatch):
    "Train, infer the vocabulary, draw Figures 3, 5 and 8, train and evaluate the parsers of Figures 4 and 6 and the ablation, and score the intrinsic measures, for Scottish Gaelic on the tiny profile, pinning what is float work; then draw them again from the pins alone."
    from factorizer_nb.infra.reproduce import paper_notebooks, run_notebooks
    monkeypatch.setenv("FACTORIZER_NB_LEDGER", str(tmp_path / "ledger"))       # the kernels inherit it: pins go there, not to data/ledger
    nbs = [n for n in paper_notebooks(ROOT) if n.name[:2] in ("11", "12", "13", "14", "15", "41", "42", "43", "48")]
    assert len(nbs) == 9
    res = run_notebooks(["gd"], "tiny", nbs, runs_dir=tmp_path / "runs",
                        parameters=dict(work_dir=str(tmp_path / "work"), figures_dir=str(tmp_path / "figures"), pins="record"))
    assert all(v is None for v in res.values()), res
    pinned = [n for n in nbs if n.name[:2] in ("11", "12", "41", "42", "43")]     # every notebook that trains something
    res = run_notebooks(["gd"], "tiny", pinned, runs_dir=tmp_path / "runs_pinned",
                        parameters=dict(work_dir=str(tmp_path / "work_pinned"), figures_dir=str(tmp_path / "figures_pinned"), pins="use"))
    assert all(v is None for v in res.values()), res
    assert not (tmp_path / "work_pinned" / "vqvae" / "checkpoint.pt").exists()              # nothing trained
    again = sorted((tmp_path / "figures_pinned").glob("*.*"))
    assert len(again) >= 20
    for f in again:                                                                 # the same bytes, figures included
        if not f.name.endswith(".manifest.json"): assert f.read_bytes() == (tmp_path / "figures" / f.name).read_bytes(), f.name
    out = tmp_path / "figures"
    for name in ("vqvae_training_gd", "fig3_splits_per_word_gd", "fig5_index_counts_gd", "fig8_colors_gd"):
        for ext in ("png", "pdf", "manifest.json"): assert (out / f"{name}.{ext}").stat().st_size > 0
        assert data_file(out, name).stat().st_size > 0                          # .csv, or .csv.xz when large
    assert (out / "table_vocab_stats_gd.md").exists() and (out / "table_quality_gd.csv").exists()
    fig3 = pd.read_csv(out / "fig3_splits_per_word_gd.csv")
    ours = fig3[fig3.tokenizer == "FACTORIZER"].sort_values("alpha_split")
    assert (ours.subwords_per_word.diff().dropna() <= 1e-12).all()
    assert "spell-checker" in json.loads((out / "fig3_splits_per_word_gd.manifest.json").read_text())["caption"]
    fig4 = pd.read_csv(out / "fig4_parser_gd.csv")
    assert set(fig4.family) == {"FACTORIZER", "BPE", "Unigram LM", "SaGe"} and fig4.LAS.between(0, 100).all()
    from factorizer_nb.downstream.tokenizer_points import Point
    from factorizer_nb.downstream.ud_data import score_conllu
    for r in fig4.itertuples():                                   # the kept predictions re-score to the figure's numbers
        d = tmp_path / "work" / "ud" / "fig4" / Point(r.family, r.setting, None).key / f"seed{r.seed}"
        assert abs(score_conllu(d / "dev.gold.conllu", d / "dev.conllu")["LAS"] - r.LAS) < 1e-9
    curves = pd.read_csv(out / "fig4_curves_gd.csv")                          # tiny scores dev after each epoch: the learning curves
    assert curves.epoch.nunique() == 2 and curves.groupby(["family", "setting"]).ngroups == fig4.groupby(["family", "setting"]).ngroups
    last = curves[curves.epoch == 2].set_index(["family", "setting"]).LAS.sort_index()
    assert (last - fig4.set_index(["family", "setting"]).LAS.sort_index()).abs().max() < 1e-9
    fig6 = pd.read_csv(out / "fig6_noise_gd.csv")
    assert set(fig6.p_noise) == {0.0, 0.1} and len(fig6) == 4 * 2
    clean = fig6[fig6.p_noise == 0].set_index("family").LAS                 # p = 0 is the clean dev set: Figure 4's numbers
    for fam, las in clean.items(): assert abs(las - fig4[(fig4.family == fam) & (fig4.setting.isin([0.1, 500]))].LAS.iloc[0]) < 1e-9
    table1 = pd.read_csv(out / "table1_parser_ablation_gd.csv")
    assert list(table1.model) == ["BPE", "BPE + dropout", "BPE + dropout + averaging", "FACTORIZER", "FACTORIZER + sampling",
                                  "FACTORIZER + sampling + averaging"]
    assert table1.LAS.notna().all() and "paper LAS (fine-tuned LM)" in table1
    summary = ROOT / "nbs/paper/summary/44_parser_languages.ipynb"
    res = run_notebooks(["summary"], "tiny", [summary], runs_dir=tmp_path / "runs", lang_param="en",
                        parameters=dict(langs="gd ar", figures_dir=str(out)))
    assert all(v is None for v in res.values()), res
    langs = pd.read_csv(out / "table_parser_languages.csv")
    assert set(langs.lang) == {"gd"} and len(langs) == 4                  # Arabic has no training treebank: named as missing
    assert "ar (no training treebank)" in json.loads((out / "table_parser_languages.manifest.json").read_text())["caption"]
    intrinsic = pd.read_csv(out / "table_intrinsic_gd.csv")                # Figure 4's very points, scored without a model
    assert set(zip(intrinsic.family, intrinsic.setting)) == set(zip(fig4.family, fig4.setting))
    assert (intrinsic.fertility >= 1).all() and intrinsic.whole_word_share.between(0, 1).all()
    assert intrinsic.renyi_efficiency.between(0, 1).all() and (intrinsic.renyi_efficiency < intrinsic.shannon_efficiency).all()
    triplets = intrinsic.renyi_efficiency_triplet_space
    assert triplets[intrinsic.family == "FACTORIZER"].notna().all() and triplets[intrinsic.family != "FACTORIZER"].isna().all()
    res = run_notebooks(["summary"], "tiny", [ROOT / "nbs/paper/summary/48_intrinsic_languages.ipynb"], runs_dir=tmp_path / "runs",
                        lang_param="en", parameters=dict(langs="gd ar", figures_dir=str(out)))
    assert all(v is None for v in res.values()), res
    ranks = pd.read_csv(out / "table_renyi_vs_las.csv")
    assert set(ranks.lang) == {"gd"} and (ranks.points == len(intrinsic)).all() and ranks.kendall_tau.between(-1, 1).all()
    assert set(pd.read_csv(out / "table_summary_intrinsic.csv").lang) == {"gd"}          # Arabic was not run here
    factorial = ROOT / "nbs/paper/heavy/19_factorial.ipynb"                   # issue #28 §2 on the same VQ-VAE and vocabulary
    res = run_notebooks(["gd"], "tiny", [factorial], runs_dir=tmp_path / "runs",
                        parameters=dict(work_dir=str(tmp_path / "work"), figures_dir=str(out), bpe_sizes="500", vq_profile=None))
    assert all(v is None for v in res.values()), res
    cells = pd.read_csv(out / "table_factorial_gd.csv")
    assert len(cells) == 4 and set(cells.segmentation) == {"FACTORIZER", "BPE-500"}
    assert set(cells.embedding) == {"one row per subword", "factorized (triplets)"}
    same_splits = cells.groupby("segmentation")["subwords per word"].nunique()
    assert (same_splits == 1).all()                                          # an embedding never changes the splits
    params = cells.set_index(["segmentation", "embedding"])["embedding parameters"]
    assert params["FACTORIZER", "factorized (triplets)"] == params["BPE-500", "factorized (triplets)"] and (params > 0).all()   # three shared tables
    assert params["FACTORIZER", "one row per subword"] != params["BPE-500", "one row per subword"]                  # one row per vocabulary entry
    aso = pd.read_csv(out / "table_factorial_aso_gd.csv")
    assert set(aso.ingredient) == {"embedding", "segmentation"} and len(aso) == 4
    curves = pd.read_csv(out / "factorial_curves_gd.csv")
    assert curves.LAS.between(0, 100).all() and curves.cell.nunique() == 4
    records = sorted((tmp_path / "work" / "ledger").rglob("seed*.json"))       # every finished parser recorded in the ledger
    assert len(records) == len(cells) and all(json.loads(r.read_text())["scores"]["LAS"] >= 0 for r in records)


@pytest.mark.slow
@needs_data
def test_vq_ladder_notebook_tiny(tmp_path):
    "Issue #28 §1 on the tiny profile: two VQ-VAE points on two word lists, their measures and parsers, and the fitted trends."
    from factorizer_nb.infra.reproduce import run_notebooks
    out = tmp_path / "figures"
    res = run_notebooks(["gd"], "tiny", [ROOT / "nbs/paper/heavy/20_vq_ladder.ipynb"], runs_dir=tmp_path / "runs",
                        parameters=dict(work_dir=str(tmp_path / "work"), figures_dir=str(out), points="tiny tiny_ladder", word_lists="1000 2000",
                                        fit_from="tiny"))
    assert all(v is None for v in res.values()), res
    ladder = pd.read_csv(out / "table_vq_ladder_gd.csv")
    assert len(ladder) == 4 and set(ladder.word_list) == {"top 1,000", "top 2,000"}
    for _, d in ladder.groupby("word_list"):
        d = d.set_index("point")
        assert 2 * d.steps["tiny_ladder"] == 3 * d.steps["tiny"] and d.word_samples["tiny"] == d.steps["tiny"] * 64
        assert abs(d.flops["tiny_ladder"] / d.flops["tiny"] - 1.5) < 1e-9             # same shapes and list: FLOPs in proportion to steps
    assert (ladder.list_entries <= ladder.top_words).all() and ladder.ratio_to_bpe_600.gt(0).all()
    assert ladder.LAS.between(0, 100).all() and (ladder.seeds == 1).all()
    fits = pd.read_csv(out / "table_vq_ladder_fit_gd.csv")
    assert set(fits.measure) >= {"ratio_to_bpe_600", "LAS", "Lemmas"} and (fits.points == 2).all()
    assert set(zip(fits.measure, fits.form)) >= {("ratio_to_bpe_600", "power law"), ("ratio_to_bpe_600", "power-law gap"), ("LAS", "linear")}
    fitted = fits.slope_per_decade.notna()                                     # a gap fit needs every point on one side of BPE's level
    assert fits[fitted].share_crossing.between(0, 1).all() and (fits.paper_flops > ladder.flops.max()).all()
    assert (fits[fitted & (fits.form == "power-law gap")].share_crossing == 0).all() and fits[fitted].value_at.notna().all()
    assert "paper's shapes" in json.loads((out / "vq_ladder_gd.manifest.json").read_text())["caption"]
    fig4 = ROOT / "nbs/paper/41_fig4_parser.ipynb"                      # Figure 4 on a ladder point's vocabulary (top 1,000: not tiny's own list)
    res = run_notebooks(["gd"], "tiny", [fig4], runs_dir=tmp_path / "runs", parameters=dict(work_dir=str(tmp_path / "fig4"), figures_dir=str(out),
                        vq_profile="tiny", vq_words=1000, ladder_dir=str(tmp_path / "work" / "ladder"), ledger=1, families="FACTORIZER"))
    assert all(v is None for v in res.values()), res
    assert not (tmp_path / "fig4" / "vocab.dawg").exists()                     # no VQ-VAE of its own: the ladder's was read
    assert "compute-ladder 'tiny' VQ-VAE vocabulary on the top 1,000 words (1 x 64" in json.loads((out / "fig4_parser_gd.manifest.json").read_text())["caption"]
    fig4_points = pd.read_csv(out / "table_fig4_parser_gd.csv")
    assert set(fig4_points.family) == {"FACTORIZER"} and len(list((tmp_path / "fig4" / "ledger").rglob("seed*.json"))) == len(fig4_points)
    shutil.rmtree(tmp_path / "work" / "ladder")                               # runs/ lost: no VQ-VAE, no vocabulary
    res = run_notebooks(["gd"], "tiny", [ROOT / "nbs/paper/heavy/20_vq_ladder.ipynb"], runs_dir=tmp_path / "runs2",
                        parameters=dict(work_dir=str(tmp_path / "work"), figures_dir=str(out), points="tiny tiny_ladder", word_lists="1000 2000",
                                        fit_from="tiny", leave_out="tiny_ladder-2000"))
    assert all(v is None for v in res.values()), res
    kept = ladder[~((ladder.point == "tiny_ladder") & (ladder.top_words == 2000))].reset_index(drop=True)
    pd.testing.assert_frame_equal(pd.read_csv(out / "table_vq_ladder_gd.csv"), kept)     # rows and parser scores from the ledger alone
    assert "Not yet measured: tiny_ladder on the top 2,000." in json.loads((out / "vq_ladder_gd.manifest.json").read_text())["caption"]
    assert not list((tmp_path / "work").glob("ladder/tiny*"))                  # nothing trained
