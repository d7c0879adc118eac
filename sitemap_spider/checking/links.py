"""Pure checks of one ``<xhtml:link>`` of a ``<url>``: what search engines ignore or misread.

xhtml1-strict.xsd, the official schema of the namespace, accepts any link (a relative href, any
rel, a lower-case region): what it refuses is an ``xsd`` error. What it accepts but Google does
not read from a sitemap is a warning here, each with its own rule. Google reads two forms
(Search Central, "Localized versions" and "Separate URLs"):

- ``rel="alternate" hreflang="LANG" href="ABSOLUTE URL"``: the page in another language or
  region; LANG is an ISO 639-1 language, optionally an ISO 15924 script and an ISO 3166-1
  alpha-2 region (case does not matter: ``en-gb`` is ``en-GB``), or ``x-default``;
- ``rel="alternate" media="..." href="ABSOLUTE URL"``: the separate mobile URL of the page.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from sitemap_spider.checking.values import LOC_WARNINGS, Problem, loc_problems

# xs:language, which the schema checks: a value outside it is already an xsd error.
_XS_LANGUAGE: Final = re.compile(r"[a-zA-Z]{1,8}(?:-[a-zA-Z0-9]{1,8})*", re.ASCII)
# language[-script][-region] as Google reads it: 2 letters, 4 letters, 2 letters.
_GOOGLE_HREFLANG: Final = re.compile(r"[a-z]{2}(?:-[a-z]{4})?(?:-[a-z]{2})?", re.ASCII | re.IGNORECASE)
# Regions people write that ISO 3166-1 does not have (Google names en-UK as a common mistake).
_NOT_ISO_REGIONS: Final = {"uk": "GB", "eu": None}


def link_problems(attributes: Mapping[str, str]) -> list[Problem]:
    """The warnings of an ``<xhtml:link>`` with these attributes (no namespace on the names)."""
    rel = attributes.get("rel", "").strip()
    href = attributes.get("href")
    hreflang = attributes.get("hreflang")
    if rel.lower() != "alternate":
        return [("link.ignored", f"rel={rel!r}: search engines read only rel=\"alternate\" links in a sitemap")]
    if hreflang is None and attributes.get("media") is None:
        return [("link.ignored", "an alternate link with neither hreflang nor media: search engines ignore it")]
    problems: list[Problem] = []
    if hreflang is not None:
        problems += _hreflang_problems(hreflang.strip())
    if href is None:
        problems.append(("link.ignored", "a link with no href: search engines ignore it"))
    else:
        problems += _href_problems(href.strip())
    return problems


def _hreflang_problems(value: str) -> list[Problem]:
    if value.lower() == "x-default" or not _XS_LANGUAGE.fullmatch(value):
        return []  # x-default is fine; what xs:language refuses is the schema's error
    if not _GOOGLE_HREFLANG.fullmatch(value):
        return [(
            "link.hreflang",
            f"hreflang={value!r}: search engines read an ISO 639-1 language (2 letters), optionally a "
            "4-letter script and a 2-letter region (en, en-GB, zh-Hant-TW), or x-default; this link is ignored",
        )]  # fmt: skip
    region = value.rsplit("-", 1)[-1] if "-" in value else None
    if region is not None and len(region) == 2 and region.lower() in _NOT_ISO_REGIONS:
        better = _NOT_ISO_REGIONS[region.lower()]
        hint = f" (use {value[: -len(region)]}{better})" if better else ""
        return [("link.hreflang", f"hreflang={value!r}: {region} is not an ISO 3166-1 region{hint}")]
    return []


def _href_problems(href: str) -> list[Problem]:
    problems = []
    for rule, detail in loc_problems(href):
        if rule == "loc.not_absolute":
            problems.append(("link.not_absolute", f"href {detail}: search engines ignore the link"))
        elif rule not in LOC_WARNINGS:
            problems.append(("link.href", f"href: {detail}"))
    return problems
