"""The package as a user gets it. The wheel built from a clone, and the one built from the sdist, carry the pinned
FACTORIZER vocabularies as real files; twine accepts both; installed with the base dependencies only, in a fresh virtual
environment outside the checkout, the tokenizer works for every packaged language without torch; with [hf],
`AutoTokenizer` reads a saved folder, offline."""
import json, os, subprocess, sys, tarfile, textwrap, zipfile
from email.parser import Parser
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from factorizer_nb.factorizer.pretrained import packaged_dir, pretrained_languages

ROOT = Path(__file__).resolve().parents[1]
OFFLINE = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}   # refused at once


def _run(*cmd, cwd=None, env=None, timeout=600) -> str:
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


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


def _closure(requirements: list[str], extras: set[str] = frozenset()) -> set[str]:
    "The distributions installed here that `requirements` (of a package, with `extras`) need, transitively."
    out, todo = set(), [(Requirement(r), extras) for r in requirements]
    while todo:
        req, wanted = todo.pop()
        if req.marker and not any(req.marker.evaluate({"extra": e}) for e in (wanted or {""})): continue
        name = canonicalize_name(req.name)
        dist = metadata.distribution(name)                          # raises if the lock lacks it
        assert req.specifier.contains(dist.version, prereleases=True), (req, dist.version)
        if name in out and not req.extras: continue
        out.add(name)
        todo += [(Requirement(r), set(req.extras)) for r in dist.requires or []]
    return out


def _link_distributions(names: set[str], folder: Path) -> None:
    "Expose exactly these installed distributions in `folder` (links to their files), as a site directory would."
    folder.mkdir()
    for name in names:
        dist = metadata.distribution(name)
        site = Path(dist.locate_file(""))
        for top in {f.parts[0] for f in dist.files or [] if f.parts[0] not in ("..", "__pycache__")}:
            if (site / top).exists() and not (folder / top).exists(): (folder / top).symlink_to(site / top)


def _requires(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    return Parser().parsestr(meta).get_all("Requires-Dist") or []


BASE_CHECK = textwrap.dedent("""
    import sys
    from factorizer_nb.factorizer.tokenizer import Factorizer
    from factorizer_nb.factorizer.pretrained import pretrained_languages
    import factorizer_nb
    langs = pretrained_languages()
    for lang in langs:
        fz = Factorizer.from_pretrained(lang)
        text = "Tokenization with factorized subwords"
        assert fz.decode(fz.encode(text).ids) == text, lang
    try: import factorizer_nb.downstream.parser
    except ImportError as e: print("extra:", e.extra)
    print("file:", factorizer_nb.__file__)
    print("langs:", " ".join(langs))
    print("torch:", "torch" in sys.modules)
""")

HF_CHECK = textwrap.dedent("""
    import sys, tempfile, factorizer_nb.hf
    from transformers import AutoTokenizer
    from factorizer_nb.factorizer.tokenizer import Factorizer
    from factorizer_nb.hf.tokenizer import FactorizerTokenizer
    tok = FactorizerTokenizer.from_pretrained("en")
    d = tempfile.mkdtemp(); tok.save_pretrained(d)
    auto = AutoTokenizer.from_pretrained(d)
    text = "Tokenization with factorized subwords"
    assert auto(text)["input_ids"] == Factorizer.from_pretrained("en").encode(text, add_special_tokens=True).ids
    print("auto:", type(auto).__name__, auto.pretrained_vocabulary["language"])
""")


@pytest.mark.slow                                       # about a minute: sdist, wheel, two installs
def test_the_built_package_as_a_user_gets_it(tmp_path):
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, ROOT, cwd=tmp_path)   # sdist, its wheel
    (sdist,), (wheel,) = dist.glob("factorizer_nb-*.tar.gz"), dist.glob("factorizer_nb-*.whl")
    langs = pretrained_languages()
    with tarfile.open(sdist) as t, zipfile.ZipFile(wheel) as z:
        members = {m.name.split("/", 1)[1]: m for m in t.getmembers() if "/" in m.name}    # in factorizer_nb-<v>/
        for lang in langs:
            for ext in ("xz", "json"):
                name, want = f"factorizer_nb/pretrained/{lang}.{ext}", (packaged_dir() / f"{lang}.{ext}").read_bytes()
                assert members[name].isfile(), f"{name} is not a real file in the sdist"
                assert t.extractfile(members[name]).read() == want and z.read(name) == want
    _run(sys.executable, "-m", "twine", "check", "--strict", sdist, wheel)

    requires = _requires(wheel)
    pins = [r for r in requires if any(s.operator in ("==", "===") for s in Requirement(r).specifier)]
    assert requires and not pins, pins                                              # ranges, not pins
    base = [r for r in requires if "extra ==" not in r]
    assert {canonicalize_name(Requirement(r).name) for r in base} == {"numpy", "numba", "dawg2", "fastcore", "tqdm"}

    venv, work = tmp_path / "venv", tmp_path / "elsewhere"
    work.mkdir()
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    py = venv / "bin" / "python"
    site = Path(_run(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV")}
    env.update(OFFLINE, FACTORIZER_NB_CACHE=str(tmp_path / "cache"), PIP_NO_INDEX="1")
    # the base dependencies as the lock installed them here (no download), and nothing else
    _link_distributions(_closure(base), tmp_path / "base")
    (site / "base-deps.pth").write_text(str(tmp_path / "base") + "\n")
    pip = [sys.executable, "-m", "pip", "--python", py, "install", "-q", "--no-index"]
    _run(*pip, wheel, cwd=work, env=env)
    _run(sys.executable, "-m", "pip", "--python", py, "check", cwd=work, env=env)
    out = dict(line.split(": ", 1) for line in _run(py, "-c", BASE_CHECK, cwd=work, env=env).splitlines())
    assert Path(out["file"]).is_relative_to(site) and out["langs"].split() == langs, out
    assert (out["torch"], out["extra"]) == ("False", "experiments"), out

    hf = [r for r in requires if 'extra == "hf"' in r]
    _link_distributions(_closure(hf, {"hf"}) - _closure(base), tmp_path / "hf")
    (site / "hf-deps.pth").write_text(str(tmp_path / "hf") + "\n")
    _run(*pip, f"factorizer-nb[hf] @ {wheel.as_uri()}", cwd=work, env=env)
    assert _run(py, "-c", HF_CHECK, cwd=work, env=env).strip() == "auto: FactorizerTokenizer en"
