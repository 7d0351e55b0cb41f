"The data layer against the data directory: registry checksums, loaders, refusals."
import lzma
import pytest
from factorizer_nb.core import corpora, settings, sources
from factorizer_nb.core.text import add_noise
from fixtures import needs_data



@needs_data
@pytest.mark.parametrize("rel", sorted(sources.registry()))
def test_every_registry_file_matches_its_checksum(rel):
    assert len(sources.read_bytes(rel)) == sources.registry()[rel].bytes


@needs_data
@pytest.mark.parametrize("lang", settings.LANGS)
def test_each_language_section_names_existing_files(lang):
    s = settings.load_settings(lang)
    for key in ("ud_train", "ud_dev", "ud_test", "ud_eval", "morph"):
        if s[key] != "-": assert s[key] in sources.registry(), (lang, key, s[key])
    sents = corpora.ud_sentences(s["ud_eval"])
    assert len(sents) > 100 and all(sents)


def test_corrupt_and_missing_files_name_themselves(tmp_path, monkeypatch):
    monkeypatch.setenv("FACTORIZER_NB_DATA", str(tmp_path))
    rel = "ud/gd_arcosg-ud-dev.conllu.xz"
    with pytest.raises(sources.DataError, match="Missing data file ud/gd_arcosg-ud-dev.conllu.xz.*download"):
        sources.read_text(rel)
    (tmp_path / "ud").mkdir()
    (tmp_path / rel).write_bytes(lzma.compress(b"1\tx\n")[:-5])
    with pytest.raises(sources.DataError, match="Corrupt"):
        sources.read_text(rel)


def test_derived_files_explain_why_they_cannot_be_downloaded(tmp_path):
    with pytest.raises(sources.DataError, match="no single public file"):
        sources.fetch("text/en_gutenberg8.txt.xz", tmp_path)


@pytest.mark.parametrize("lang", ["gd", "xx", "ga"])
def test_wordfreq_refuses_languages_it_lacks(lang):
    with pytest.raises(ValueError, match="silently use English"):
        corpora.word_counts(f"wordfreq:{lang}")


def test_noise_is_seeded_and_keeps_words():
    text = "Noise keeps the number of words the same"
    assert add_noise(text, 0.5, seed=4) == add_noise(text, 0.5, seed=4)
    assert add_noise(text, 0.5, seed=4) != add_noise(text, 0.5, seed=5)
    assert len(add_noise(text, 1.0, seed=1).split(" ")) == len(text.split(" "))
    with pytest.raises(ValueError): add_noise(text, 1.5)


def test_noise_edit_rates_are_uniform():
    out = add_noise("a" * 30000, 1.0, seed=0)
    # deletions remove, flips give "A", repeats give 2-4 "a": expected length ≈ 30000 * (0 + 1 + 3) / 3
    assert abs(out.count("A") / 10000 - 1) < 0.05
    assert abs(len(out) / 40000 - 1) < 0.05


def test_settings_layers():
    paper, small = settings.load_settings("en"), settings.load_settings("en", "small")
    assert paper["vq_layers"] == 6 and small["vq_layers"] < 6
    assert small["alpha_split"] == 0.1 and paper["sage_M"] == 1500
    with pytest.raises(KeyError, match="profile:nope"):
        settings.load_settings("en", "nope")
