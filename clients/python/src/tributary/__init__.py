"""A small, typed client of Tributary's GraphQL API for notebooks.

    from tributary import Tributary
    tb = Tributary("http://127.0.0.1:8080", token="trb_...")
    tb.impact("shop.raw.orders")                 # a pandas DataFrame
    g = tb.lineage("shop.raw.orders", depth=2)   # a networkx DiGraph
"""

from .client import Change, Explanation, Instant, JobRef, Node, TableRef, Tributary, qualified_name
from .errors import (
    AmbiguousNameError,
    BadInputError,
    ForbiddenError,
    NotFoundError,
    TributaryError,
    UnauthenticatedError,
    UnavailableError,
)

__version__ = "0.1.0"

__all__ = [
    "Tributary",
    "Node",
    "Change",
    "Explanation",
    "TableRef",
    "JobRef",
    "Instant",
    "qualified_name",
    "TributaryError",
    "NotFoundError",
    "ForbiddenError",
    "BadInputError",
    "AmbiguousNameError",
    "UnauthenticatedError",
    "UnavailableError",
]
