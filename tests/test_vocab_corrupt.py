"""Corrupt vocabulary files: every flipped bit either loads or raises `VocabularyFormatError` within seconds.

Before the checksum and the isolated reader, one flipped bit could make `Vocabulary.load` loop forever (records repeating
endlessly), exhaust memory (a size field read as 2^31 units) or crash the interpreter (dawgdic follows offsets without
bounds checks)."""
import json, random, signal
import pytest
from factorizer_nb.factorizer.vocab import FORMAT_MAGIC, RECORD_FORMAT, Vocabulary, VocabularyFormatError, write_authors_dawg

SECONDS = 10          # per load; a correct load of these files takes milliseconds


def toy_items(n=300, seed=0):
    rng = random.Random(seed)
    keys = sorted({"".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 6))) for _ in range(n)})
    return [(k, (i % 256, (3 * i) % 256, (7 * i) % 256), -(i % 17) / 4) for i, k in enumerate(keys)]


def write(kind, path):
    "A vocabulary file of one kind: ours (v2, with checksum), ours v1 (no checksum) or the authors' format."
    v = Vocabulary(toy_items())
    if kind == "ours": return v.save(path)
    if kind == "authors": return write_authors_dawg(v.items(), path)
    header = dict(format_version=1, record_format=RECORD_FORMAT, size=len(v), meta={})
    path.write_bytes(FORMAT_MAGIC + json.dumps(header).encode() + b"\n" + v.dawg.tobytes())
    return path


class Hang(Exception): pass


def load_within(path, seconds=SECONDS):
    def alarm(*_): raise Hang(f"Vocabulary.load({path}) took more than {seconds} s")
    old = signal.signal(signal.SIGALRM, alarm); signal.alarm(seconds)
    try: return Vocabulary.load(path)
    finally: signal.alarm(0); signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("kind", ["ours", "ours-v1", "authors"])
def test_bit_flips_load_or_raise(tmp_path, kind):
    good = write(kind, tmp_path / "good.vocab")
    original = sorted(Vocabulary.load(good).items())
    raw, rng, outcomes = good.read_bytes(), random.Random(1), {"loaded": 0, "error": 0}
    header_end = raw.index(b"\n", len(FORMAT_MAGIC)) + 1 if raw.startswith(FORMAT_MAGIC) else 0
    for trial in range(250):
        pos, bit = rng.randrange(len(raw)), rng.randrange(8)
        bad = bytearray(raw); bad[pos] ^= 1 << bit
        p = tmp_path / f"flip{trial}.vocab"; p.write_bytes(bytes(bad))
        try: v = load_within(p)
        except VocabularyFormatError: outcomes["error"] += 1; continue
        outcomes["loaded"] += 1
        if kind == "ours" and pos >= header_end:                  # the checksum covers every byte of the body
            pytest.fail(f"a flipped bit at body byte {pos} went unnoticed")
        if kind == "ours": assert sorted(v.items()) == original   # a flip inside the header's meta changes only meta
    assert outcomes["error"] > 0, outcomes


def test_the_checksum_names_the_problem(tmp_path):
    p = write("ours", tmp_path / "v.vocab")
    raw = bytearray(p.read_bytes()); raw[-10] ^= 0x40; p.write_bytes(bytes(raw))
    with pytest.raises(VocabularyFormatError, match="checksum"): Vocabulary.load(p)


@pytest.mark.parametrize("kind", ["ours-v1", "authors"])
def test_size_fields_are_checked_before_parsing(tmp_path, kind):
    "A unit count read as 2^31 once made dawg allocate 8 GiB; now the sizes must fit the file."
    p = write(kind, tmp_path / "v.vocab")
    raw = bytearray(p.read_bytes())
    start = raw.index(b"\n", len(FORMAT_MAGIC)) + 1 if raw.startswith(FORMAT_MAGIC) else 0
    raw[start + 3] ^= 0x40
    p.write_bytes(bytes(raw))
    with pytest.raises(VocabularyFormatError, match="size fields"): load_within(p)


def test_truncated_files_raise(tmp_path):
    for kind in ("ours", "ours-v1", "authors"):
        p = write(kind, tmp_path / f"{kind}.vocab")
        raw = p.read_bytes()
        for cut in (1, 7, len(raw) // 2):
            p.write_bytes(raw[:-cut])
            with pytest.raises(VocabularyFormatError): load_within(p)
