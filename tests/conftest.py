import os
from pathlib import Path
import pytest

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
