"""Fixtures shared by the test modules: the fixture web sites and their crawls."""

from tests.crawl_fixtures import case_site, generated_site

__all__ = ["case_site", "generated_site"]
