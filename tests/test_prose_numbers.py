"""The numbers in the paper notebooks' prose come from the committed tables they describe.

Every markdown cell of every paper notebook is read ("What we found", the introductions, every note). Each decimal number
of such a cell (`3.62`, `1.46×`, `69.3%`, `−0.15`, `9.8 M`, `8.6·10¹⁷`), and each integer written
with a thousands separator (`96,975`), must be, to its printed precision, a value of the tables the cell describes, a
percentage of one, or the difference or ratio of two values of one column; where a table has one row per seed, the means
and sds over seeds count as values too; a percentage may also say how much more or less one value is than another of its
column; and a number may be a numeric setting of a profile the cell describes (`settings.ini`: steps, sizes). The tables
described are those the notebook saves (for English, in `figures/`, in every `figures/<profile>/` the cell names, in
that of every profile it names as "the `<profile>` profile", and in that of the profile its parameters cell sets) and
those the cell names (`figures/grid/table_fig4_parser_*`, `<lang>` read as any language). A number that matches none
is stale: rewrite it from the table. The few numbers that no table holds are listed in `NOT_IN_TABLES` with the reason.

The tables are read as committed (git's `HEAD`), since `make reproduce` rewrites `figures/` with its own run's numbers
before `make test` runs; outside a git checkout, the files as they are.
"""
import functools, glob, io, json, lzma, math, re, subprocess
from pathlib import Path
import numpy as np, pandas as pd, pytest
from factorizer_nb.core.settings import load_settings
from factorizer_nb.infra.repro_report import _git_show

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(glob.glob(str(ROOT / "nbs/paper/*.ipynb"))
                   + [p for d in ("summary", "heavy", "lm", "eval") for p in glob.glob(str(ROOT / f"nbs/paper/{d}/*.ipynb"))])
# " M": millions; "·10¹⁷": times a power of ten
NUMBER = re.compile(r"(?<![\w.])[−-]?(?:\d[\d,]*\.\d+|\d{1,3}(?:,\d{3})+)(?:%|×| M(?!\w)|·10[⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)?")
SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
IN_CELL = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")   # the numbers of a table cell ("60.39 ± 0.48")
NOT_IN_TABLES = {
    "*": {"12,544"},                          # en_ewt's training sentences: the treebank's size, no result
    "18_languages.ipynb": {"1,000"},          # the top-1,000 words: the measure's definition
    "21_sage.ipynb": {"20,000", "16,000",     # Table 6's sizes, which the sage_paper profile sets
                      "750,000",              # the paper's Wikipedia lines
                      "10,882", "101,651"},   # Turkish's only running text offline (its UD treebanks), counted for the prose
    "45_lm_tables.ipynb": {"2,000", "40,000", "3,700", "38,000"},   # Gaelic's and Turkish's treebank sizes, rounded
    "14_fig5_index_counts.ipynb": {"91.8%", "10.5%"},   # shares of ids counted fewer than 10 times, in the figure
    "15_fig8_colors.ipynb": {"25.6%"},        # counted on the figure's subwords in the notebook, not stored
    "18_lm_sweep.ipynb": {"0.5 M"},           # read off the training curves, which the table does not keep
    "44_lm_gates.ipynb": {"53.2 M",           # 13,000 steps of 32 x 128 subwords: the profile's settings multiplied
                          "0.116", "65.09", "72.43",   # the first run's, on another CPU, replaced by the committed one
                          "16,000",           # a rough power-law extrapolation, worked out for the prose
                          "5,000",            # the factorized unigram model's per-word perplexity per subword, rounded
                          "2,500"},           # the paper's Table 6 subwords over ours (a difference in sweep_lm_en too)
    "46_fig7_scarcity.ipynb": {"3.24 M", "52,926",   # words in the whole text and in 1/64: the figure's manifest
                               "83,000"},     # BPE subwords in 1/64, counted for the prose, not stored
}

def findings(nb: dict) -> list[str]:
    "The notebook's markdown cells, each read on its own: 'What we found' and every other."
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]

def _code(nb: dict) -> str:
    "The notebook's code cells, joined."
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")

def named_profiles(nb: dict, text: str) -> set[str]:
    "The profiles the cell names (\"the `cpu` profile\") and the one the notebook's parameters cell sets."
    return set(re.findall(r"`(\w+)` profile", text)) | set(re.findall(r"^profile = \"(\w+)\"", _code(nb), re.M))

def setting_numbers(profiles: set[str]) -> list[float]:
    "English's numeric settings on each of `profiles` (a cell quotes a profile's steps or sizes)."
    out = []
    for p in sorted(profiles):
        try: s = load_settings("en", p)
        except (KeyError, ValueError): continue                      # a word before "profile" that names none
        out += [float(v) for v in s.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return out

def described_tables(nb: dict, text: str) -> list[Path]:
    """The CSVs (plain or xz) the cell describes: those the notebook saves for English (in `figures/` and in the figure
    directories of the profiles the cell or the notebook's parameters name), and those the cell names."""
    code = _code(nb)
    names = {n.replace("{lang}", "en") for n in re.findall(r"save_(?:figure|table)\([^\"]*?f?\"([\w{}]+)\"", code)}
    profiles = named_profiles(nb, text)
    dirs = ({ROOT / "figures"} | {ROOT / d for d in re.findall(r"`(figures/\w+)/", text)}
            | {ROOT / "figures" / p for p in profiles if (ROOT / "figures" / p).is_dir()})
    stems = [d / n for n in names for d in dirs]
    for ref in re.findall(r"`(figures/[^`\s]+)`", text):
        pattern = str(ROOT / ref.replace("<lang>", "*").removesuffix(".csv"))
        stems += [Path(p.removesuffix(".xz").removesuffix(".csv"))
                  for ext in (".csv", ".csv.xz") for p in glob.glob(pattern + ext)]
    files = [s.parent / (s.name + ext) for s in stems for ext in (".csv", ".csv.xz")]
    return sorted({f for f in files if (f in COMMITTED if COMMITTED is not None else f.exists())})

def _tracked(folder: str) -> set[Path] | None:
    "The files git tracks under `folder`, or None outside a git checkout (or where git fails)."
    try: out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--", folder], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError): return None
    return {ROOT / p for p in out.stdout.decode("utf-8").split("\0") if p}

COMMITTED = _tracked("figures")

@functools.lru_cache(maxsize=None)
def committed_bytes(path: Path) -> bytes:
    "A file as committed at HEAD (the file on disk outside a git checkout), read once for all the cells that use it."
    if COMMITTED is None: return path.read_bytes()
    data = _git_show(ROOT, path.relative_to(ROOT).as_posix())
    if data is None: raise FileNotFoundError(f"{path} is not committed at HEAD")
    return data

def _read(path: Path) -> pd.DataFrame:
    "A table as committed, plain or xz-compressed."
    data = committed_bytes(path)
    return pd.read_csv(io.BytesIO(lzma.decompress(data) if path.suffix == ".xz" else data))

def over_seeds(df: pd.DataFrame) -> list[list[float]]:
    """A table with one row per seed: each numeric column's means and sds (ddof 1) over the seeds of one setting, a
    setting being the values of the columns that take few values (at most one per group of seeds), as a notebook
    reports a mean ± sd."""
    if "seed" not in df or df.seed.nunique() < 2: return []
    per_setting = len(df) / df.seed.nunique()
    keys = [c for c in df.columns
            if c != "seed" and (not pd.api.types.is_numeric_dtype(df[c]) or df[c].nunique() <= per_setting)]
    metrics = [c for c in df.select_dtypes("number").columns if c != "seed" and c not in keys]
    if not keys or not metrics: return []
    g = df.groupby(keys, dropna=False)[metrics]
    mean, sd = g.mean(), g.std(ddof=1)
    return [mean[c].tolist() for c in metrics] + [sd[c].dropna().tolist() for c in metrics]

def table_numbers(files: list[Path], shares: bool = False) -> np.ndarray:
    """Every value, percentage, and difference and ratio of two values of one column, of the tables (and of the means
    over seeds of a table with a row per seed, whose differences and ratios are then those of the means); with `shares`,
    only how much more or less one value of a column is than another, in percent (what a `%` number may also be)."""
    out = set()
    for f in files:
        df = _read(f)
        columns = []
        for col in df.columns:
            cells = df[col].dropna()
            if pd.api.types.is_numeric_dtype(cells): columns.append(cells.astype(float).tolist())
            else: columns.append([float(x.replace(",", "")) for v in cells
                                  for x in IN_CELL.findall(str(v).replace("−", "-"))])
        seeds = over_seeds(df)                # where there are seeds, differences, ratios and shares are of the means
        for vals, pairs in [(c, not seeds) for c in columns] + [(c, True) for c in seeds]:
            v = np.array([x for x in vals if math.isfinite(x)])
            if not shares: out.update(v); out.update(100 * v)
            if pairs and 0 < len(v) <= 60:
                with np.errstate(all="ignore"): r = np.divide.outer(v, v).ravel()
                r = r[np.isfinite(r)]
                if shares: out.update(100 * (r - 1)); continue
                out.update(np.subtract.outer(v, v).ravel()); out.update(r)
    return np.array(sorted(out))

def stale_numbers(text: str, numbers: np.ndarray, shares: np.ndarray | None = None) -> list[str]:
    "The decimal numbers of `text` that no table number (or share, for a percentage) gives at their printed precision."
    bad, with_shares = [], numbers if shares is None else np.union1d(numbers, shares)
    for tok in NUMBER.findall(text):
        tok_, _, power = tok.partition("·10")
        scale = 1e6 if tok.endswith(" M") else 10.0 ** int(power.translate(SUPERSCRIPT)) if power else 1
        plain = tok_.removesuffix(" M").rstrip("%×").replace(",", "").replace("−", "-")
        x, digits = abs(float(plain)) * scale, len(plain.partition(".")[2])
        pool = with_shares if tok.endswith("%") else numbers
        if not (np.abs(np.abs(pool) - x) <= (0.5 * 10 ** -digits + 1e-9) * scale).any(): bad.append(tok)
    return bad

def test_the_check_finds_a_stale_number():
    numbers = table_numbers([ROOT / "figures" / "table_quality_en.csv"])
    assert stale_numbers("2.02 subwords per word (1.46×), 69.3% whole", numbers) == []
    assert stale_numbers("2.09 subwords per word (1.51×), 69.3% whole", numbers) == ["2.09", "1.51×"]
    assert stale_numbers("96,975 subwords, not 101,495", numbers) == ["101,495"]
    steps = table_numbers([ROOT / "figures" / "cpu" / "sweep_lm_en.csv"])     # lr3x: 6,418,345 subwords in 1,567 steps
    assert stale_numbers("6.4 M subwords in 1,567 steps, 6.42 M", steps) == []
    assert stale_numbers("6.5 M subwords, 6.43 M, 1,568 steps", steps) == ["6.5 M", "6.43 M", "1,568"]
    noise = [ROOT / "figures" / "cpu" / "fig6_lm_noise_en.csv"]              # 3 seeds a row each: BPE loses 32.55 LAS
    assert stale_numbers("BPE loses 32.55 LAS, 50.2% of 64.89", table_numbers(noise), table_numbers(noise, True)) == []
    assert stale_numbers("BPE loses 32.65 LAS, 50.3% of 64.89", table_numbers(noise), table_numbers(noise, True)) \
        == ["32.65", "50.3%"]
    fit = table_numbers([ROOT / "figures" / "grid" / "table_vq_ladder_fit_en.csv"])   # a crossing at 8.55·10¹⁷ FLOPs
    assert stale_numbers("8.6·10¹⁷ FLOPs, 8.55·10¹⁷", fit) == []
    assert stale_numbers("8.6·10¹⁶ FLOPs, 8.5·10¹⁷", fit) == ["8.6·10¹⁶", "8.5·10¹⁷"]

@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: Path(p).name)
def test_findings_match_their_tables(path):
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    for text in findings(nb):
        files = described_tables(nb, text)
        known = NOT_IN_TABLES.get(Path(path).name, set()) | NOT_IN_TABLES["*"]
        numbers = np.union1d(table_numbers(files), setting_numbers(named_profiles(nb, text)))
        stale = [n for n in stale_numbers(text, numbers, table_numbers(files, shares=True)) if n not in known]
        assert not stale, (f"{Path(path).name}: numbers in the cell {text.splitlines()[0][:50]!r} that no table it "
                           f"describes holds: {stale} "
                           f"(tables: {', '.join(f.relative_to(ROOT).as_posix() for f in files) or 'none found'})")
