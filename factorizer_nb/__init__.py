__version__ = "0.1.0"

# a module of an optional extra that is imported without it names the extra to install (core.extras, nbs/core/07_extras)
from .core.extras import install_hints as _install_hints
_install_hints()
