"""Fixtures shared by the test modules (the fixture web sites and their crawls), and the run order."""

import pytest

from tests.crawl_fixtures import case_site, generated_site, private_data_home
from tests.redis_fixtures import redis_url

__all__ = ["case_site", "generated_site", "private_data_home", "redis_url"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` or ``xdist_group`` first, in their order, then the rest in theirs.

    pytest-xdist (``--dist loadgroup --no-loadscope-reorder``) hands tests out in this order,
    a group as one unit: a crawl of a minute handed out last would run alone at the end of the
    suite while the other workers sit idle.
    """
    items.sort(key=lambda item: not (item.get_closest_marker("slow") or item.get_closest_marker("xdist_group")))
