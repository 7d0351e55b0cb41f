"""The wheel built from a clone carries the pinned FACTORIZER vocabularies, so `Factorizer.from_pretrained` works after
`pip install` outside the checkout."""
import subprocess, sys, zipfile
from pathlib import Path

import pytest

from factorizer_nb.factorizer.pretrained import packaged_dir, pretrained_languages

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow                                       # builds a wheel: about 15 s
def test_wheel_ships_the_pinned_vocabularies(tmp_path):
    langs = pretrained_languages()
    assert langs, "no packaged vocabularies"
    for lang in langs:                                  # in a clone, each links to its language's pin
        link = packaged_dir() / f"{lang}.xz"
        assert link.resolve() == (ROOT / "data" / "ledger" / f"{lang}-small" / "pins" / "vocab.dawg.xz").resolve()
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(ROOT),
                          "-w", str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    (wheel,) = tmp_path.glob("factorizer_nb-*.whl")
    with zipfile.ZipFile(wheel) as z:
        for lang in langs:
            for ext in ("xz", "json"):
                assert z.read(f"factorizer_nb/pretrained/{lang}.{ext}") == (packaged_dir() / f"{lang}.{ext}").read_bytes()
