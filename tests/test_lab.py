"""A paper notebook run in JupyterLab, in headless Chromium, where no `runs/` exists: its figure and caption show.

JupyterLab serves a copy of `nbs/paper/13_fig3_splits` whose outputs go to a temporary folder, with `runs/` pointed
at an empty one (`$FACTORIZER_NB_RUNS`), as in a fresh clone: the notebook reads the pinned vocabulary. Run All is
JupyterLab's own command; the test then waits for the saved figure's image and its caption in the page.
"""
import json, os, secrets, shutil, signal, socket, subprocess, sys, time, urllib.request
from pathlib import Path
import pytest
from fixtures import needs_data

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "nbs" / "paper" / "13_fig3_splits.ipynb"
FIGURE = "fig3_splits_per_word_en"
RUN_TIMEOUT_S = 600

def _browser() -> tuple[str, str]:
    "Debian's chromium and chromium-driver (as `make docs-check` uses them); the test is skipped, saying so, without."
    browser, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (browser and driver):
        pytest.skip("no chromium and chromium-driver (apt-get install chromium chromium-driver)")
    return browser, driver

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); return s.getsockname()[1]

def _copy_with_outputs_in(src: Path, dst: Path, out: Path) -> Path:
    "The notebook, its figures and tables sent to `out` (a cell after its parameters, as papermill would add)."
    nb = json.loads(src.read_text(encoding="utf-8"))
    at = next(i for i, c in enumerate(nb["cells"]) if "parameters" in c.get("metadata", {}).get("tags", []))
    nb["cells"].insert(at + 1, dict(cell_type="code", execution_count=None, id="testparams", metadata={}, outputs=[],
                                    source=[f"figures_dir = {str(out)!r}"]))
    dst.write_text(json.dumps(nb), encoding="utf-8")
    return dst

def _wait_for_server(url: str, proc: subprocess.Popen, timeout: float = 120) -> None:
    t0 = time.time()
    while time.time() - t0 < timeout:
        if proc.poll() is not None: raise RuntimeError(f"jupyter lab exited with {proc.returncode}")
        try:
            urllib.request.urlopen(url, timeout=5); return
        except OSError: time.sleep(1)
    raise TimeoutError(f"jupyter lab did not answer at {url}")

@pytest.mark.slow
@needs_data
def test_paper_notebook_shows_its_figure_and_caption_in_jupyterlab(tmp_path):
    browser, driver_path = _browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    lab, runs, out, settings = (tmp_path / d for d in ("lab", "runs", "figures", "settings"))
    for d in (lab, runs, out, settings): d.mkdir()
    # JupyterLab's notebook renders every cell (no windowing), so the figure is in the page wherever it is
    tracker = settings / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    nb = _copy_with_outputs_in(NOTEBOOK, lab / NOTEBOOK.name, out)
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, FACTORIZER_NB_RUNS=str(runs), JUPYTERLAB_SETTINGS_DIR=str(settings),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
           f"--ServerApp.root_dir={lab}", f"--IdentityProvider.token={token}", "--LabApp.expose_app_in_browser=True",
           "--LabApp.news_url=None"] + (["--allow-root"] if os.geteuid() == 0 else [])
    server = subprocess.Popen(cmd, env=env, cwd=lab, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    opts = webdriver.ChromeOptions(); opts.binary_location = browser
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"): opts.add_argument(a)
    driver = None
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_for_server(f"{base}/api/status?token={token}", server)
        driver = webdriver.Chrome(options=opts, service=Service(executable_path=driver_path))
        driver.get(f"{base}/lab/tree/{nb.name}?token={token}")
        t0, ran, found = time.time(), False, None
        while time.time() - t0 < RUN_TIMEOUT_S and not found:
            time.sleep(2)
            if not ran:                                    # once the notebook's kernel is ready: JupyterLab's Run All
                ran = driver.execute_script(
                    "const app = window.jupyterapp; const w = app && app.shell.currentWidget;"
                    "if (!w || !w.sessionContext || !w.sessionContext.session || !w.sessionContext.session.kernel"
                    "    || w.sessionContext.session.kernel.status !== 'idle') return false;"
                    "app.commands.execute('notebook:run-all-cells'); return true;")
                continue
            errors = driver.execute_script(
                "return Array.from(document.querySelectorAll("
                "'.jp-OutputArea-output[data-mime-type=\"application/vnd.jupyter.stderr\"]'))"
                ".map(e => e.innerText).filter(t => t.includes('Traceback') || t.includes('Error'))")
            assert not errors, f"the notebook failed in JupyterLab: {errors[0][-2000:]}"
            found = driver.execute_script(
                "const caps = Array.from(document.querySelectorAll('.jp-RenderedMarkdown'))"
                f"  .filter(e => e.innerText.includes('Figure {FIGURE}.'));"
                "if (!caps.length) return null;"
                "const out = caps[0].closest('.jp-OutputArea');"
                "const imgs = Array.from(out.querySelectorAll('.jp-RenderedImage img'))"
                "  .filter(i => i.complete && i.naturalWidth > 0);"
                "return imgs.length ? [caps[0].innerText, imgs[0].naturalWidth, imgs[0].naturalHeight] : null;")
        assert ran, "the notebook's kernel never became ready in JupyterLab"
        assert found, f"no figure {FIGURE} with its caption in the page after {RUN_TIMEOUT_S} s"
        caption, width, height = found
        assert caption.startswith(f"Figure {FIGURE}. Subwords per word on ud/") and width > 300 and height > 200
        assert (out / f"{FIGURE}.png").exists() and not (runs / "en" / "13_fig3_splits.ipynb").exists()
        assert (runs / "en" / "vocab.dawg").exists()             # restored from the pins: no runs/ before
    finally:
        if driver is not None: driver.quit()
        os.killpg(server.pid, signal.SIGTERM)
        try: server.wait(30)
        except subprocess.TimeoutExpired: os.killpg(server.pid, signal.SIGKILL)
