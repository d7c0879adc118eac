"""The entries of a document past its limit, counted by their start tags without parsing them.

Once a sitemap holds more than 50,000 ``<url>`` (or an index more than 50,000 ``<sitemap>``)
it is refused whatever the rest holds; parsing a million more entries only to count them took
seconds of libxml2 and Python per million. The rest is scanned for the entry's start tag
instead (a start tag inside a comment or a CDATA section would be counted too).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable


def start_tag(prefix: str | None, local_name: str) -> bytes:
    """The start of the start tag of ``prefix:local_name`` (no prefix: the default namespace)."""
    return b"<" + (f"{prefix}:{local_name}" if prefix else local_name).encode()


def unparsed_tail(chunk: bytes) -> bytes:
    """The end of the last chunk fed to the parser that it cannot have reported yet: a tag cut
    short (a ``<`` with no ``>`` after it)."""
    cut = chunk.rfind(b"<")
    return chunk[cut:] if cut >= 0 and b">" not in chunk[cut:] else b""


def count_start_tags(tag: bytes, tail: bytes, read: Callable[[], bytes]) -> int:
    """Start tags ``tag`` (as ``start_tag`` gives) in ``tail`` and the chunks ``read`` gives until b""."""
    pattern = re.compile(re.escape(tag) + rb"[\s>/]")
    count = 0
    carry = tail
    for chunk in _chunks(read):
        data = carry + chunk
        count += sum(1 for _ in pattern.finditer(data))
        # A tag cut at the chunk's end, too short to have matched, goes on in the next chunk.
        cut = data.rfind(b"<")
        carry = data[cut:] if cut >= 0 and len(data) - cut <= len(tag) else b""
        tail = b""
    return count + sum(1 for _ in pattern.finditer(tail))  # no chunk came: the tail alone


def _chunks(read: Callable[[], bytes]) -> Iterable[bytes]:
    while chunk := read():
        yield chunk
