"""Lakehold: a typed Python client for v4 Iceberg tables on a Lakehold catalog.

Connect with :func:`load_catalog` (PyIceberg REST properties), or run an
embedded catalog over a directory with :func:`local`; create tables
from Arrow schemas, append Arrow data, update columns with row-aligned
column files (:meth:`Table.update_columns`, :meth:`Table.merge_columns`)
and scan with column files, deletion vectors and row lineage applied.
"""

from .catalog import Catalog, load_catalog
from .errors import (
    AlreadyExistsError,
    CommitFailedError,
    CommitStateUnknownError,
    DeletesError,
    FilterError,
    ForbiddenError,
    LakeholdError,
    MergeKeyError,
    MisalignedError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NotAuthorizedError,
    NotChangedError,
    NotFoundError,
    ServiceUnavailableError,
    StitchError,
    TransportError,
    ValidationError,
)
from .events import Event, EventPage
from ._local import CatalogBinaryNotFoundError, LocalCatalog, LocalCatalogError, find_catalog_binary, local
from .table import Table

try:  # scan.py is written alongside; the package imports without it.
    from .scan import Scan
except ImportError:  # pragma: no cover
    Scan = None  # type: ignore[assignment,misc]

__all__ = [
    "AlreadyExistsError", "Catalog", "CatalogBinaryNotFoundError", "CommitFailedError", "CommitStateUnknownError", "DeletesError", "Event",
    "EventPage", "FilterError", "ForbiddenError", "LakeholdError", "LocalCatalog", "LocalCatalogError", "MergeKeyError", "MisalignedError",
    "NoSuchNamespaceError", "NoSuchTableError", "NotAuthorizedError", "NotChangedError", "NotFoundError", "Scan",
    "ServiceUnavailableError", "StitchError", "Table", "TransportError", "ValidationError", "find_catalog_binary", "load_catalog", "local",
]
