"""Downstream experiments (UD parsing, masked language models); filled by the notebooks in `nbs/downstream/`."""
