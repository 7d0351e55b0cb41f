"""The numbers in the paper notebooks' "What we found" come from the committed tables they describe.

Each decimal number of such a cell (`3.62`, `1.46×`, `69.3%`, `−0.15`), and each integer written with a thousands
separator (`96,975`), must be, to its printed precision, a value of the tables the cell describes, a percentage of one,
or the difference or ratio of two values of one column. The tables
described are those the notebook saves (for English, in `figures/` and in every `figures/<profile>/` the cell names) and
those the cell names (`figures/grid/table_fig4_parser_*`, `<lang>` read as any language). A number that matches none
is stale: rewrite it from the table. The few numbers that no table holds are listed in `NOT_IN_TABLES` with the reason.
"""
import glob, io, json, lzma, math, re
from pathlib import Path
import numpy as np, pandas as pd, pytest

ROOT = Path(__file__).resolve().parents[1]
# the main job's notebooks and the summaries; heavy/ and lm/ describe tables of other profiles in prose of their own
NOTEBOOKS = sorted(glob.glob(str(ROOT / "nbs/paper/*.ipynb")) + glob.glob(str(ROOT / "nbs/paper/summary/*.ipynb")))
NUMBER = re.compile(r"(?<![\w.])[−-]?(?:\d[\d,]*\.\d+|\d{1,3}(?:,\d{3})+)(?:%|×)?")
IN_CELL = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")   # the numbers of a table cell ("60.39 ± 0.48")
NOT_IN_TABLES = {
    "12_vocab_inference.ipynb": {"16.8"},     # 256^3 triplets in millions: the codebooks' size, no result
    "41_fig4_parser.ipynb": {"12,544"},       # en_ewt's training sentences: the plateau profile's setting
    "18_languages.ipynb": {"1,000"},          # the top-1,000 words: the measure's definition
    "14_fig5_index_counts.ipynb": {"91.8%", "10.5%"},   # shares of ids counted fewer than 10 times, in the figure
    "15_fig8_colors.ipynb": {"25.6%"},        # counted on the figure's subwords in the notebook, not stored
}

def findings(nb: dict) -> list[str]:
    "The notebook's 'What we found' cells."
    return ["".join(c["source"]) for c in nb["cells"]
            if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## What we found")]

def described_tables(nb: dict, text: str) -> list[Path]:
    "The CSVs (plain or xz) the cell describes: those the notebook saves for English, and those the cell names."
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    names = {n.replace("{lang}", "en") for n in re.findall(r"save_(?:figure|table)\([^\"]*?f?\"([\w{}]+)\"", code)}
    dirs = {ROOT / "figures"} | {ROOT / d for d in re.findall(r"`(figures/\w+)/", text)}
    stems = [d / n for n in names for d in dirs]
    for ref in re.findall(r"`(figures/[^`\s]+)`", text):
        pattern = str(ROOT / ref.replace("<lang>", "*").removesuffix(".csv"))
        stems += [Path(p.removesuffix(".xz").removesuffix(".csv"))
                  for ext in (".csv", ".csv.xz") for p in glob.glob(pattern + ext)]
    files = [s.parent / (s.name + ext) for s in stems for ext in (".csv", ".csv.xz")]
    return sorted({f for f in files if f.exists()})

def _read(path: Path) -> pd.DataFrame:
    "A table, plain or xz-compressed."
    return pd.read_csv(io.BytesIO(lzma.decompress(path.read_bytes()))) if path.suffix == ".xz" else pd.read_csv(path)

def table_numbers(files: list[Path]) -> np.ndarray:
    "Every value, percentage, and difference and ratio of two values of one column, of the tables."
    out = set()
    for f in files:
        df = _read(f)
        for col in df.columns:
            cells = df[col].dropna()
            if pd.api.types.is_numeric_dtype(cells): vals = cells.astype(float).tolist()
            else: vals = [float(x.replace(",", "")) for v in cells for x in IN_CELL.findall(str(v).replace("−", "-"))]
            v = np.array([x for x in vals if math.isfinite(x)])
            out.update(v); out.update(100 * v)
            if 0 < len(v) <= 60:
                out.update(np.subtract.outer(v, v).ravel())
                with np.errstate(all="ignore"): r = np.divide.outer(v, v).ravel()
                out.update(r[np.isfinite(r)])
    return np.array(sorted(out))

def stale_numbers(text: str, numbers: np.ndarray) -> list[str]:
    "The decimal numbers of `text` that no table number gives at their printed precision."
    bad = []
    for tok in NUMBER.findall(text):
        plain = tok.rstrip("%×").replace(",", "").replace("−", "-")
        x, digits = abs(float(plain)), len(plain.partition(".")[2])
        if not (np.abs(np.abs(numbers) - x) <= 0.5 * 10 ** -digits + 1e-9).any(): bad.append(tok)
    return bad

def test_the_check_finds_a_stale_number():
    numbers = table_numbers([ROOT / "figures" / "table_quality_en.csv"])
    assert stale_numbers("2.02 subwords per word (1.46×), 69.3% whole", numbers) == []
    assert stale_numbers("2.09 subwords per word (1.51×), 69.3% whole", numbers) == ["2.09", "1.51×"]
    assert stale_numbers("96,975 subwords, not 101,495", numbers) == ["101,495"]

@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: Path(p).name)
def test_findings_match_their_tables(path):
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    for text in findings(nb):
        files = described_tables(nb, text)
        known = NOT_IN_TABLES.get(Path(path).name, ())
        stale = [n for n in stale_numbers(text, table_numbers(files)) if n not in known]
        assert not stale, (f"{Path(path).name}: numbers in 'What we found' that no table it describes holds: {stale} "
                           f"(tables: {', '.join(f.relative_to(ROOT).as_posix() for f in files) or 'none found'})")
