"""Fixtures for the PyIceberg and DuckDB interop tests.

The catalog under test is started by integration/run.sh; its URI and the
warehouse name arrive as CATALOG_URI and CATALOG_WAREHOUSE.
"""
import os
import uuid

import pytest
from pyiceberg.catalog import load_catalog


@pytest.fixture(scope="session")
def catalog_uri():
    return os.environ["CATALOG_URI"]


@pytest.fixture(scope="session")
def warehouse():
    return os.environ["CATALOG_WAREHOUSE"]


@pytest.fixture(scope="session")
def catalog(catalog_uri, warehouse):
    # The same configuration the README shows.
    return load_catalog("lake", **{"type": "rest", "uri": catalog_uri, "warehouse": warehouse})


@pytest.fixture
def ns(catalog):
    name = "py_" + uuid.uuid4().hex[:10]
    catalog.create_namespace(name)
    yield name
