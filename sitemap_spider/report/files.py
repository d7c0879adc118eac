"""A report file is whole or absent: written beside itself under a hidden name, then renamed into place.

The one owner of that name (``.<report>.partial``): the writers use :func:`replacing`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


def partial_name(path: Path) -> str:
    """The hidden name ``path`` is written under until it is whole."""
    return f".{path.name}.partial"


@contextmanager
def replacing(path: Path) -> Iterator[IO[str]]:
    """A text file that becomes ``path`` when the block ends well; removed when it does not.

    Only a SIGKILL (or a power cut) in the middle can leave it.
    """
    partial = path.with_name(partial_name(path))
    try:
        with partial.open("w", encoding="utf-8") as out:
            yield out
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
