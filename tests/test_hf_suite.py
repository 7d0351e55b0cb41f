"""transformers' own common tokenizer tests (`TokenizerTesterMixin` of the locked release) against `FactorizerTokenizer`.

The suite comes from transformers' source distribution, fetched and checked by its sha256 at set-up (tests/hf_suite/fetch.py,
`make setup-hf-suite`) into .cache/transformers_suite/; without it this module skips locally and fails under CI=true.
The tests the suite cannot put to a triplet tokenizer are skipped below, each with its reason (docs/guide.md lists them);
tests/test_hf_tokenizer.py checks the same behaviour on triplets."""
import os, sys, unittest
from pathlib import Path
import pytest

SUITE = Path(__file__).resolve().parents[1] / ".cache" / "transformers_suite"
if not (SUITE / "test_tokenization_common.py").is_file():
    _msg = f"transformers' tokenizer tests are not in {SUITE}: run `make setup-hf-suite` (make test does)"
    if os.environ.get("CI", "").lower() == "true": raise RuntimeError(_msg)
    pytest.skip(_msg, allow_module_level=True)
sys.path.insert(0, str(SUITE.parent))
from transformers_suite.test_tokenization_common import TokenizerTesterMixin  # noqa: E402
from factorizer_nb.hf.tokenizer import FactorizerTokenizer  # noqa: E402

# the suite's tests that need integer ids (a vocabulary as {token: int}, ids that are ints), each with why
INTEGER_IDS = {}


class TestFactorizerTokenizerSuite(TokenizerTesterMixin, unittest.TestCase):
    "The suite on English's pinned vocabulary, saved with save_pretrained and read back as the suite reads any tokenizer."
    tokenizer_class = FactorizerTokenizer
    from_pretrained_id = "en"
    test_tokenizer_from_extractor = False       # there is no tokenizer.json: FACTORIZER is not a `tokenizers` model

    @classmethod
    def setUpClass(cls):
        "The suite's set-up, with the pinned English tokenizer saved where it reads one (AutoTokenizer goes to the hub)."
        cls.from_pretrained_id = None
        super().setUpClass()
        cls.from_pretrained_id = ["en"]
        cls.tokenizers_list = [(FactorizerTokenizer, "en", {})]
        FactorizerTokenizer.from_pretrained("en").save_pretrained(cls.tmpdirname)


for _name, _why in INTEGER_IDS.items():
    setattr(TestFactorizerTokenizerSuite, _name, unittest.skip(_why)(getattr(TokenizerTesterMixin, _name)))
