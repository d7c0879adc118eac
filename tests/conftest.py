"""Fixtures shared by the test modules (the fixture web sites and their crawls), and the run order."""

import pytest
from _pytest.nodeid import NodeId

from tests.crawl_fixtures import case_site, generated_site, private_data_home
from tests.redis_fixtures import redis_url
from tests.site_rich import rich_site

__all__ = ["case_site", "generated_site", "private_data_home", "redis_url", "rich_site"]


@pytest.hookimpl(trylast=True)  # after pytest-xdist's own hook, which names the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` or ``xdist_group`` first, in their order, then the rest in theirs.

    pytest-xdist (``--dist loadgroup --no-loadscope-reorder``) hands tests out in this order,
    a group as one unit: a crawl of a minute handed out last would run alone at the end of the
    suite while the other workers sit idle.
    """
    items.sort(key=lambda item: not (item.get_closest_marker("slow") or item.get_closest_marker("xdist_group")))
    if getattr(config.option, "loadgroup", False):  # set on pytest-xdist's workers only
        _name_the_groups(items)


def _name_the_groups(items: list[pytest.Item]) -> None:
    """Put each test's ``xdist_group`` in its node id (``test@group``), which loadgroup reads.

    pytest-xdist 3.8 does so by setting ``item._nodeid``, which pytest 9.2 no longer reads (its
    node ids are structured, ``item._id``): the tests of a group were handed out one by one, and
    a module-scoped crawl was run once per worker. pytest-xdist issue #1386; once it is fixed, the
    ids already end with the group and nothing is done here.
    """
    for item in items:
        marks = item.iter_markers("xdist_group")
        groups = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default")) for mark in marks})
        suffix = "@" + "_".join(groups)
        if groups and not item.nodeid.endswith(suffix):
            item._id = NodeId.parse(item.nodeid + suffix)
