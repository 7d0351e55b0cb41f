"Every committed figure and table comes from the current code and settings (see `factorizer_nb.infra.reporting.output_problems`)."
from factorizer_nb.infra.reporting import output_problems


def test_no_stale_outputs():
    problems = output_problems()
    assert not problems, "stale outputs under figures/ (regenerate them with make reproduce):\n" + "\n".join(
        f"  {f}: {'; '.join(p)}" for f, p in problems.items())


def _copy_outputs(dst):
    "A checkout-like folder with the committed figures (no images), the papers' values and settings.ini."
    import shutil
    from factorizer_nb.core.settings import project_root
    root = project_root()
    (dst / "data").mkdir()
    shutil.copy(root / "data" / "paper_values.csv", dst / "data" / "paper_values.csv")
    shutil.copy(root / "settings.ini", dst / "settings.ini")
    shutil.copytree(root / "figures", dst / "figures", ignore=shutil.ignore_patterns("*.pdf"))
    return dst


def test_committed_results_index_is_current():
    from factorizer_nb.infra.results_index import index_problems
    assert not index_problems(), "figures/results_index is stale: run python -m factorizer_nb.infra.results_index"


def test_check_outputs_fails_on_a_stale_results_index(tmp_path, capsys):
    """`make check-outputs` (reporting check, then results_index --check) passes on a current index and fails once a
    committed CSV changes a row's number."""
    from factorizer_nb.infra import reporting, results_index
    root = _copy_outputs(tmp_path)
    results_index.write_index(root)
    check = ["--check", "--root", str(root)]
    assert reporting.main(["check", "--root", str(root)]) == 0, capsys.readouterr().out
    assert results_index.main(check) == 0, capsys.readouterr().out
    f = root / "figures" / "bd_table2_units_per_word_en_enwiki.csv"
    f.write_text(f.read_text().replace("1.5684", "1.2684"))            # BPE's tokens per word: a re-run that changed a number
    capsys.readouterr()
    assert results_index.main(check) == 1
    out = capsys.readouterr().out
    assert "STALE  figures/results_index.md" in out and "STALE  figures/results_index.csv" in out
    results_index.write_index(root)                                         # regenerating makes it current again
    assert results_index.main(check) == 0


def test_reproduction_report_of_the_committed_run(tmp_path):
    "The committed outputs, reread as a rerun, agree with themselves in every main number and verdict; a moved number does not."
    import subprocess
    import pandas as pd
    from factorizer_nb.core.settings import project_root
    from factorizer_nb.infra.repro_report import reproduction_report
    root = project_root()
    names = subprocess.run(["git", "ls-tree", "--name-only", "HEAD", "figures/"], cwd=root, capture_output=True, text=True).stdout.split()
    for name in [n for n in names if n.endswith(".csv")]:                    # the committed CSVs, as git has them
        (tmp_path / name.split("/")[-1]).write_bytes(subprocess.run(["git", "show", f"HEAD:{name}"], cwd=root, capture_output=True).stdout)
    numbers, verdict, line, machines = reproduction_report("en", figures=tmp_path)
    assert len(numbers) > 100 and numbers.status.isin(["agrees", "exact"]).all(), numbers[~numbers.status.isin(["agrees", "exact"])]
    assert line == f"{len(numbers)} of {len(numbers)} numbers within tolerance; every verdict unchanged"
    f = tmp_path / "table_fig4_parser_en.csv"
    t = pd.read_csv(f); t.loc[0, "LAS"] += 5.0; t.to_csv(f, index=False)      # a rerun whose parser moved by 5 LAS
    numbers, _, line, _ = reproduction_report("en", figures=tmp_path)
    key = f"{t.family[0]} / {t.setting[0]:g}"
    moved = numbers.set_index(["output", "key", "column"]).loc[("table_fig4_parser_en", key, "LAS")]
    assert moved.status in ("outside", "untoleranced") and abs(moved.difference - 5.0) < 1e-9
    assert not line.startswith(f"{len(numbers)} of {len(numbers)}")
