"""FACTORIZER in `transformers` (the optional extra `hf`), filled by the notebooks in `nbs/hf/`; the only subpackage
that imports `transformers`. Importing it registers `FactorizerTokenizer` with `AutoTokenizer`."""
from .tokenizer import FactorizerTokenizer, FactorizerConfig
