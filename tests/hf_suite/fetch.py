"""Fetch transformers' common tokenizer tests for tests/test_hf_suite.py: the locked release's source distribution, checked by
its sha256, unpacked into .cache/transformers_tests/ (git-ignored); run by `make setup-hf-suite` (make test and make test-slow), never by a test.

Offline, a local run only warns (the suite's test then skips); under CI=true a failed fetch is an error."""
import hashlib, io, os, re, shutil, subprocess, sys, tarfile, tempfile
from pathlib import Path

VERSION = "5.24.0"                 # transformers in requirements.lock
SDIST_SHA256 = "906cb8c3cb2123575e263962586a4d21a979ce97feeb95fe6aaf66fe6ae88bf3"   # transformers-5.24.0.tar.gz
FILES = ("test_tokenization_common.py", "test_sentencepiece_backend_mixin.py", "test_tokenizers_backend_mixin.py")
ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / ".cache" / "transformers_tests"   # the name ends in "tests": transformers' get_tests_dir looks for it
SAMPLE = Path(__file__).with_name("sample_text.txt")     # the project's own text where the suite reads fixtures/sample_text.txt


def locked_hashes() -> set[str]:
    "The sha256 hashes requirements.lock holds for transformers==VERSION (wheel and sdist)."
    lock = (ROOT / "requirements.lock").read_text()
    m = re.search(rf"^transformers=={re.escape(VERSION)}((?:\s*\\\n\s*--hash=sha256:[0-9a-f]+)+)", lock, re.M)
    if m is None: raise SystemExit(f"requirements.lock does not pin transformers=={VERSION}: update tests/hf_suite/fetch.py")
    return set(re.findall(r"sha256:([0-9a-f]+)", m.group(1)))


def unpack(sdist: bytes, target: Path = TARGET) -> Path:
    "The three suite files of the sdist, the sample text and an __init__.py, written into `target` (a package)."
    digest = hashlib.sha256(sdist).hexdigest()
    if digest != SDIST_SHA256: raise ValueError(f"transformers-{VERSION}.tar.gz has sha256 {digest}, not {SDIST_SHA256}")
    tmp = Path(tempfile.mkdtemp(dir=target.parent))
    with tarfile.open(fileobj=io.BytesIO(sdist), mode="r:gz") as tar:
        for name in FILES:
            (tmp / name).write_bytes(tar.extractfile(f"transformers-{VERSION}/tests/{name}").read())
    (tmp / "fixtures").mkdir()
    shutil.copyfile(SAMPLE, tmp / "fixtures" / "sample_text.txt")
    (tmp / "__init__.py").write_text(f"# transformers {VERSION}'s tokenizer tests (sdist sha256 {SDIST_SHA256})\n")
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return target


def fetched(target: Path = TARGET) -> bool:
    "Whether `target` holds this version's suite (and the current sample text)."
    init = target / "__init__.py"
    return (init.is_file() and SDIST_SHA256 in init.read_text() and all((target / f).is_file() for f in FILES)
            and (target / "fixtures" / "sample_text.txt").read_bytes() == SAMPLE.read_bytes())


def main() -> int:
    if fetched(): return 0
    if SDIST_SHA256 not in locked_hashes():
        raise SystemExit(f"requirements.lock's transformers=={VERSION} hashes lack the sdist's {SDIST_SHA256}")
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=TARGET.parent) as d:
        r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                            "-d", d, f"transformers=={VERSION}"], capture_output=True, text=True)
        sdists = list(Path(d).glob(f"transformers-{VERSION}.tar.gz"))
        if r.returncode or not sdists:
            msg = f"could not download transformers-{VERSION}.tar.gz: {r.stderr.strip()[-400:]}"
            if os.environ.get("CI", "").lower() == "true": raise SystemExit(msg)
            print(f"warning: {msg}\n(tests/test_hf_suite.py will be skipped)", file=sys.stderr)
            return 0
        unpack(sdists[0].read_bytes())
    print(f"transformers {VERSION}'s tokenizer tests in {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__": sys.exit(main())
