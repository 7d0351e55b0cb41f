import os, tempfile

# hypothesis keeps caches (e.g. Unicode tables) in a storage directory: keep it out of the working tree
# under pytest-xdist every worker (and the kernels and processes it starts) gets one thread: oversubscribed
# OpenMP threads on 2 cores slow torch down many times over
if os.environ.get("PYTEST_XDIST_WORKER"): os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(tempfile.gettempdir(), "factorizer-nb-hypothesis"))
from pathlib import Path
import pytest
from hypothesis import settings

# no example database in the working tree: every run starts clean
settings.register_profile("project", database=None)
settings.load_profile("project")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session", autouse=True)
def _data_dir():
    "Tests read corpora from $FACTORIZER_NB_DATA, defaulting to the shared mirror beside the checkout."
    if "FACTORIZER_NB_DATA" not in os.environ and (ROOT.parent / "shared" / "data").is_dir():
        os.environ["FACTORIZER_NB_DATA"] = str(ROOT.parent / "shared" / "data")
    yield


def has_data() -> bool:
    d = os.environ.get("FACTORIZER_NB_DATA") or str(ROOT.parent / "shared" / "data")
    return Path(d, "ud", "en_ewt-ud-dev.conllu.xz").is_file()
