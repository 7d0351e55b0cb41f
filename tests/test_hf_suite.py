"""transformers' own common tokenizer tests (`TokenizerTesterMixin` of the locked release) against `FactorizerTokenizer`.

The suite comes from transformers' source distribution, fetched and checked by its sha256 at set-up (tests/hf_suite/fetch.py,
`make setup-hf-suite`) into .cache/transformers_tests/; without it this module skips locally and fails under CI=true.
The tests the suite cannot put to a triplet tokenizer are skipped below, each with its reason (docs/guide.md lists them);
tests/test_hf_tokenizer.py checks the same behaviour on triplets."""
import os, sys, unittest
from pathlib import Path
import pytest

pytestmark = pytest.mark.slow          # about 10 minutes of one core: make test-slow runs it
SUITE = Path(__file__).resolve().parents[1] / ".cache" / "transformers_tests"
if not (SUITE / "test_tokenization_common.py").is_file():
    _msg = f"transformers' tokenizer tests are not in {SUITE}: run `make setup-hf-suite` (make test does)"
    if os.environ.get("CI", "").lower() == "true": raise RuntimeError(_msg)
    pytest.skip(_msg, allow_module_level=True)
sys.path.insert(0, str(SUITE.parent))
from transformers_tests.test_tokenization_common import TokenizerTesterMixin  # noqa: E402
from factorizer_nb.hf.tokenizer import FactorizerTokenizer  # noqa: E402

# the suite's tests that need integer ids (a vocabulary as {token: int}, ids that are ints), each with why
_IDS = "token ids are (r, g, b) triplets, not integers: "
INTEGER_IDS = {
    "test_batch_encode_dynamic_overflowing": _IDS + "it compares pad_token_id with 0 and wants 2-D input_ids (00_tokenizer "
                                             "checks overflowing windows, padded, as [rows, length, 3])",
    "test_get_vocab": _IDS + "it compares ids with len(tokenizer) (test_hf_tokenizer.py::test_get_vocab)",
    "test_maximum_encoding_length_single_input": _IDS + "it compares pad_token_id with 0 and builds integer sequences "
                                                 "(test_hf_tokenizer.py::test_maximum_encoding_length)",
    "test_maximum_encoding_length_pair_input": _IDS + "it builds integer sequences "
                                               "(test_hf_tokenizer.py::test_maximum_encoding_length)",
    "test_padding_with_attention_mask": _IDS + "it pads integer input_ids [1, 2, 3] "
                                        "(test_hf_tokenizer.py::test_padding_with_attention_mask)",
}


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
        FactorizerTokenizer.from_pretrained("en").save_pretrained(cls.tmpdirname)
        cls.from_pretrained_id = [cls.tmpdirname]          # the saved directory, which AutoTokenizer reads offline
        cls.tokenizers_list = [(FactorizerTokenizer, cls.tmpdirname, {})]


for _name, _why in INTEGER_IDS.items():
    setattr(TestFactorizerTokenizerSuite, _name, unittest.skip(_why)(getattr(TokenizerTesterMixin, _name)))
