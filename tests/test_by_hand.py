"""Every paper notebook of the main job, the eval notebook and the cross-language summaries opened by hand on a fresh tree
(no runs/), as a reader runs it: papermill outside the batch commands, with the notebook's own parameters. Each ends
without error in minutes (drawn from the pins), shows a figure where it saves one, shows no table twice, and leaves the
committed outputs as they were (git status clean)."""
import json, subprocess, sys
from pathlib import Path
import pytest
from fixtures import ROOT, copy_checkout

NOTEBOOKS = sorted(p.relative_to(ROOT / "nbs" / "paper").as_posix() for p in (ROOT / "nbs" / "paper").glob("[0-9]*.ipynb"))
NOTEBOOKS += ["eval/60_your_tokenizer.ipynb"]
# the cross-language summaries read the committed figures of their languages
NOTEBOOKS += sorted(p.relative_to(ROOT / "nbs" / "paper").as_posix()
                    for p in (ROOT / "nbs" / "paper" / "summary").glob("[0-9]*.ipynb"))


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    "A fresh copy of the checkout, shared by the notebooks in the order a reader might open them."
    return copy_checkout(tmp_path_factory.mktemp("by_hand"))


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_by_hand(tree, name, data_dir_env):
    nb = tree / "nbs" / "paper" / name
    out = tree / "runs" / "by_hand_copies" / Path(name).name
    out.parent.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([sys.executable, "-m", "papermill", nb.name, str(out), "--log-level", "ERROR"], cwd=nb.parent,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    cells = json.loads(out.read_text(encoding="utf-8"))["cells"]
    source = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    images = sum("image/png" in o.get("data", {}) for c in cells if c["cell_type"] == "code" for o in c.get("outputs", []))
    if "save_figure(" in source or "_figure(" in source: assert images >= 1, f"{name} saves a figure but shows none"
    tables = [o["data"]["text/html"] for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])
              if "<table" in "".join(o.get("data", {}).get("text/html", ""))]
    tables = ["".join(t) for t in tables]
    assert len(tables) == len(set(tables)), f"{name} shows a table twice"
    status = subprocess.run(["git", "status", "--porcelain", "--", "figures", "data", "README.md"], cwd=tree,
                            capture_output=True, text=True, check=True).stdout
    assert not status, f"{name} changed committed outputs:\n{status}"
