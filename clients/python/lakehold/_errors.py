"""Internal alias of :mod:`lakehold.errors` for modules that import the
error classes privately (the read side); the classes live in one place."""

from .errors import *  # noqa: F401,F403
from .errors import LakeholdError  # noqa: F401  (named for type checkers)
