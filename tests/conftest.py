"""Fixtures shared by the test modules: the fixture web sites and their crawls."""

from tests.crawl_fixtures import case_site, generated_site, private_data_home
from tests.redis_fixtures import redis_url

__all__ = ["case_site", "generated_site", "private_data_home", "redis_url"]
