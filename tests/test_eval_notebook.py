"""End to end: the evaluation notebook (nbs/paper/eval/60_your_tokenizer) on the tiny profile, with a tokenizer trained here,
both budgets: the report's tables, figure, HTML and manifest."""
import json
import pandas as pd
import pytest
from fixtures import ROOT, needs_data


@pytest.mark.slow
@needs_data
def test_evaluation_notebook_tiny(tmp_path):
    from factorizer_nb.baselines.adapters import train_hf_bpe
    from factorizer_nb.infra.reproduce import run_notebooks
    words = "the a an Mac cat dog house ann na tha bha agus air ri gu do le mi thu e i sinn sibh iad".split()
    path = tmp_path / "tokenizer.json"
    train_hf_bpe([(w, 10) for w in words], 300).save(str(path))
    out = tmp_path / "report"
    res = run_notebooks(["gd"], "tiny", [ROOT / "nbs/paper/eval/60_your_tokenizer.ipynb"], runs_dir=tmp_path / "runs",
                        parameters=dict(tokenizer=str(path), budget="parser", out_dir=str(out), name="toy BPE"))
    assert list(res.values()) == [None], res
    for f in ("report.md", "report.html", "table_your_tokenizer_gd.manifest.json", "table_your_tokenizer_gd.csv",
              "table_your_tokenizer_gd.png", "table_your_tokenizer_gd.md", "subwords.csv", "intrinsic.csv", "noise.csv",
              "speed.csv", "vocabulary.csv", "parser.csv", "parser_noise.csv", "loader.csv"):
        assert (out / f).is_file(), f
    m = json.loads((out / "table_your_tokenizer_gd.manifest.json").read_text())
    assert m["settings"]["lang"] == "gd" and m["settings"]["profile"] == "tiny" and m["git"]["sha"]
    assert len(m["tokenizer_sha256"]) == 64 and m["loader"]["format"] == "tokenizer.json" and m["packages"]["tokenizers"]
    parser = pd.read_csv(out / "parser.csv")
    yours = parser[parser.family == "yours"]
    assert len(yours) == 1 and 0 <= yours.LAS.iloc[0] <= 100 and yours.subwords_per_word.iloc[0] >= 1
    under = pd.read_csv(out / "parser_noise.csv")
    assert sorted(under.p_noise) == [0.0, 0.1] and under.LAS.between(0, 100).all()
    noise = pd.read_csv(out / "noise.csv")
    assert sorted(noise.p_noise.unique()) == [0.0, 0.1]
    assert "toy BPE" in (out / "report.html").read_text() and "data:image/png;base64," in (out / "report.html").read_text()
