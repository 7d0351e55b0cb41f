"""make lab's JupyterLab server: the project's kernel, no news prompt, a notebook under nbs/ saved clean by the server."""
import json, os, shutil, socket, subprocess, sys, time, urllib.request
from pathlib import Path
import pytest
from factorizer_nb.core.settings import project_root
from factorizer_nb.infra.lab import install, lab_command

NB = "nbs/paper/13_fig3_splits.ipynb"

def _free_port() -> int:
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); return s.getsockname()[1]

@pytest.mark.slow
def test_lab_saves_clean(tmp_path):
    root = project_root()
    for f in ("settings.ini", "pyproject.toml", NB):          # a checkout of three files
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True); shutil.copy(root / f, tmp_path / f)
    (tmp_path / "runs/en").mkdir(parents=True)
    install()                                              # as make setup does
    port, token = _free_port(), "factorizer-nb-test"
    env = {k: v for k, v in os.environ.items() if k != "FACTORIZER_NB_SETTINGS"}
    cmd = lab_command(port, ["--no-browser", f"--IdentityProvider.token={token}"], root=tmp_path)
    server = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    def api(path, body=None):
        req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method="PUT" if body else "GET",
                                     data=json.dumps(body).encode() if body else None,
                                     headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r: return json.loads(r.read() or b"null")
    try:
        for _ in range(240):
            try: api("/api/status"); break
            except OSError: time.sleep(0.5)
        else: pytest.fail("JupyterLab did not start")
        notification = api("/lab/api/settings/@jupyterlab/apputils-extension:notification")["schema"]["properties"]
        assert notification["fetchNews"]["default"] == "false" and notification["checkForUpdates"]["default"] is False
        specs = api("/api/kernelspecs")["kernelspecs"].values()
        assert "factorizer-nb (python3)" in {k["spec"]["display_name"] for k in specs}     # make setup's kernel
        nb = api(f"/api/contents/{NB}")["content"]
        for i, cell in enumerate(nb["cells"]):                 # as JupyterLab sends it after Run All
            if cell["cell_type"] == "code":
                cell["outputs"] = [{"output_type": "stream", "name": "stderr", "text": "x\n"}]
                cell["execution_count"] = i
        nb["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
        for where in (NB, f"runs/en/{Path(NB).name}"):
            api(f"/api/contents/{where}", dict(type="notebook", format="json", content=nb))
        assert (tmp_path / NB).read_bytes() == (root / NB).read_bytes()          # the source as committed
        kept = json.loads((tmp_path / "runs/en" / Path(NB).name).read_text())
        assert any(c.get("outputs") for c in kept["cells"])                      # an executed copy keeps its run
    finally:
        server.terminate(); server.wait(timeout=30)
