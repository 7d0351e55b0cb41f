import os, tempfile

# hypothesis keeps caches (e.g. Unicode tables) in a storage directory: keep it out of the working tree
# under pytest-xdist every worker (and the kernels and processes it starts) gets one thread: oversubscribed
# OpenMP threads on 2 cores slow torch down many times over
# and sentencepiece trains on one thread (its waiting threads spin: two of them on busy cores train 4-9x slower)
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1"); os.environ.setdefault("FACTORIZER_NB_SPM_THREADS", "1")
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(tempfile.gettempdir(), "factorizer-nb-hypothesis"))
from hypothesis import settings

# no example database in the working tree: every run starts clean
settings.register_profile("project", database=None)
settings.load_profile("project")

from fixtures import data_dir_env  # noqa: E402,F401  (registers the shared fixtures)
