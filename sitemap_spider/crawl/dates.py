"""HTTP dates in, W3C Datetime out: the page's true last modification or nothing."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

# Real servers still send the two obsolete forms RFC 9110 section 5.6.7 asks
# recipients to accept; email.utils does not read them.
_OBSOLETE_FORMATS = (
    "%A, %d-%b-%y %H:%M:%S GMT",  # RFC 850
    "%a %b %d %H:%M:%S %Y",  # asctime(), with a space-padded day
)


def parse_http_date(value: str | bytes | None) -> datetime | None:
    """Parse an HTTP-date header value into an aware UTC datetime, or ``None``.

    A value without a zone is not an instant, so it is refused rather than guessed.

    >>> parse_http_date("Wed, 01 May 2024 10:20:30 GMT").isoformat()
    '2024-05-01T10:20:30+00:00'
    """
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    if not value or not value.strip():
        return None
    text = " ".join(value.split())
    for fmt in _OBSOLETE_FORMATS:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    try:
        parsed = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if parsed.tzinfo is None:
        return None
    return parsed.astimezone(UTC)


def w3c_datetime(moment: datetime) -> str:
    """Format an aware datetime as W3C Datetime with seconds and a numeric zone."""
    if moment.tzinfo is None:
        raise ValueError("a W3C date-time needs a timezone")
    return moment.replace(microsecond=0).isoformat()


def lastmod_from_header(value: str | bytes | None) -> str | None:
    """The ``<lastmod>`` for a ``Last-Modified`` header value, ``None`` when unusable."""
    parsed = parse_http_date(value)
    return None if parsed is None else w3c_datetime(parsed)
