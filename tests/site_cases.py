"""The case site: ONE site holding every case of issue 2, each route with its expected outcome.

The cases live by theme in tests/site_cases_links.py and tests/site_cases_responses.py;
``build_case_site`` puts them together behind one home page.
"""

from __future__ import annotations

from tests.site_builder import SiteBuilder
from tests.site_cases_links import (
    add_deep_chain,
    add_discovery,
    add_normalisation,
    add_robots_and_nofollow,
    add_schemes_and_offsite,
    add_traps,
)
from tests.site_cases_responses import (
    add_canonical,
    add_lastmod,
    add_noindex,
    add_redirects,
    add_statuses_and_types,
)
from tests.site_server import closed_port, html_page, links
from tests.site_spec import PUBLIC_ORIGIN, SiteSpec


def build_case_site(
    origin: str,
    *,
    other_origin: str | None = None,
    public_origin: str = PUBLIC_ORIGIN,
) -> SiteSpec:
    """The fixture site holding every case of issue 2; start the crawl at ``origin + "/"``.

    ``other_origin`` is another port on 127.0.0.1 (serve a recording decoy there to prove
    nothing is fetched from it); without one, a closed port is used.
    """
    b = SiteBuilder(origin, public_origin)
    other = (other_origin or f"http://127.0.0.1:{closed_port()}").rstrip("/")
    entry: list[str] = []
    entry += add_discovery(b)
    entry += add_schemes_and_offsite(b, other)
    entry += add_normalisation(b)
    entry += add_robots_and_nofollow(b)
    entry += add_noindex(b)
    entry += add_canonical(b)
    entry += add_redirects(b)
    entry += add_statuses_and_types(b)
    entry += add_lastmod(b)
    entry += add_deep_chain(b)
    entry += add_traps(b)
    b.page("/", html_page("Home", links("/about", *entry)))
    return b.spec
