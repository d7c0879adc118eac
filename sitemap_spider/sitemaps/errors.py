"""Errors raised by the sitemap output side (serializer, writer, storage, validation)."""

from __future__ import annotations


class SitemapError(Exception):
    """Base class of every error of the sitemap output side."""


class InvalidEntryError(SitemapError, ValueError):
    """An entry that cannot be written into a valid sitemap; the message says why."""


class EmptySitemapError(SitemapError):
    """There is nothing to publish: a sitemap must list at least one URL."""


class SitemapValidationError(SitemapError):
    """A written file does not satisfy the official XSD or the protocol's limits."""


class TooManyShardsError(SitemapError):
    """The URLs need more sitemap files than one index may list (50,000)."""
