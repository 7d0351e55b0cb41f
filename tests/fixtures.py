"""Shared test helpers and fixtures (registered by conftest.py; test modules import helpers from here, never from conftest)."""
import functools, os, shutil, subprocess, sys, textwrap
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA_PROBE = Path("ud", "en_ewt-ud-dev.conllu.xz")          # a file every data directory of the project has


def data_root() -> Path:
    "The data directory the tests use: $FACTORIZER_NB_DATA, else the shared mirror beside the checkout."
    return Path(os.environ.get("FACTORIZER_NB_DATA") or ROOT.parent / "shared" / "data")


def has_data() -> bool:
    return (data_root() / DATA_PROBE).is_file()


def needs_data(test):
    "Mark a test that reads the data directory: skipped without it locally, but a failure under CI=true (CI has the data)."
    @functools.wraps(test)
    def run(*args, **kwargs):
        if not has_data():
            msg = f"no data directory: {data_root() / DATA_PROBE} is missing (set $FACTORIZER_NB_DATA)"
            if os.environ.get("CI", "").lower() == "true": pytest.fail(msg)
            pytest.skip(msg)
        return test(*args, **kwargs)
    return run


@pytest.fixture(scope="session", autouse=True)
def data_dir_env():
    "Tests read corpora from $FACTORIZER_NB_DATA, defaulting to the shared mirror beside the checkout."
    if "FACTORIZER_NB_DATA" not in os.environ and (ROOT.parent / "shared" / "data").is_dir():
        os.environ["FACTORIZER_NB_DATA"] = str(ROOT.parent / "shared" / "data")
    yield


def run_python(code: str, env: dict | None = None) -> str:
    "stdout of `code` (dedented) run by a new Python process: its own address space, thread ids, random devices and thread settings."
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, check=True, capture_output=True, text=True,
                          timeout=300).stdout


def fields(encoding) -> dict:
    "An encoding's fields as a dict (`vars` of a lazy encoding would show its unmade state)."
    from factorizer_nb.core.protocol import ENCODING_FIELDS
    return {f: getattr(encoding, f) for f in ENCODING_FIELDS}


def copy_checkout(dest: Path) -> Path:
    "The checkout's tracked and untracked-but-not-ignored files, copied to `dest` (a scratch clone with this change)."
    names = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.splitlines()
    for n in names:
        if (ROOT / n).is_file():
            (dest / n).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / n, dest / n)
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    subprocess.run(["git", "add", "-A"], cwd=dest, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy"], cwd=dest, check=True)
    return dest
