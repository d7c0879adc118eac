"""Errors raised by the sitemap output side (serializer, writer, storage, validation)."""

from __future__ import annotations

from pathlib import Path


class SitemapError(Exception):
    """Base class of every error of the sitemap output side."""


class InvalidEntryError(SitemapError, ValueError):
    """An entry that cannot be written into a valid sitemap; the message says why."""


class EmptySitemapError(SitemapError):
    """There is nothing to publish: a sitemap must list at least one URL."""


class ShrinkError(SitemapError):
    """The new set lists too small a share of the previous set's URLs to replace it."""


class SitemapValidationError(SitemapError):
    """A written file does not satisfy the official XSD or the protocol's limits."""


class TooManyShardsError(SitemapError):
    """The URLs need more sitemap files than one index may list (50,000)."""


def describe_write_error(error: BaseException, output_dir: Path) -> str:
    """An error of writing the set, naming the directory when the error names no file.

    A full disk fails a ``write()``, whose error carries no file name: the user still needs to
    know which filesystem is full.
    """
    if isinstance(error, OSError) and error.filename is None:
        return f"{error} (writing in {output_dir})"
    return str(error)
