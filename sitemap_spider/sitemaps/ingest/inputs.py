"""Reading entries for ``scrapy publish``: JSON Lines, CSV or plain text, gzip or not, file or stdin.

Each reader yields records: the fields of a line, or why the line is unusable.
"""

from __future__ import annotations

import csv
import gzip
import io
import itertools
import json
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final


FORMATS: Final = ("jsonl", "csv", "txt")
_EXTENSIONS: Final = {".jl": "jsonl", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".txt": "txt"}
#: Bad lines logged one by one; past this only their count is reported (a broken export
#: of millions of lines must not flood the terminal).
MAX_REPORTED_BAD_LINES: Final = 20
_GZIP_MAGIC: Final = b"\x1f\x8b"
_FIELDS: Final = ("loc", "lastmod", "changefreq", "priority", "content_digest")

#: Nesting deeper than this makes a JSON line bad. Without a limit of its own, where the
#: decoders hit Python's recursion limit would decide, and that depends on the stack depth of
#: the process that reads the line (and differs between msgspec and the json module).
MAX_JSON_DEPTH: Final = 500
_JSON_STRING: Final = re.compile(rb'"(?:[^"\\]|\\.)*"')
_BOM: Final = b"\xef\xbb\xbf"

# A record is the fields of one input line, or the reason why that line is unusable.
Record = tuple[int, dict[str, Any] | str]


class BadInput(Exception):
    """The input as a whole is unusable (a missing file, a CSV without ``loc``)."""


def open_input(name: str) -> tuple[io.BufferedIOBase, str]:
    """Open a path or ``-`` (stdin) for reading bytes, gunzipping by the content's magic number.

    Returns the stream and the name without ``.gz``, whose extension says the format.
    """
    if name == "-":
        stdin = sys.stdin.buffer
        if not isinstance(stdin, io.BufferedReader):  # replaced stdin (tests, embedding)
            raise BadInput("standard input cannot be read as bytes")
        # The magic number, not the name: piped and renamed files are gzipped too.
        if stdin.peek(2)[:2] == _GZIP_MAGIC:
            return gzip.GzipFile(fileobj=stdin), name
        return stdin, name
    try:
        with open(name, "rb") as probe:
            gzipped = probe.read(2) == _GZIP_MAGIC
        stream: io.BufferedIOBase = gzip.GzipFile(name, "rb") if gzipped else open(name, "rb")  # noqa: SIM115
    except OSError as exc:
        raise BadInput(f"{name}: {exc.strerror or exc}") from None
    return stream, name[:-3] if name.lower().endswith(".gz") else name


def sniff_format(name: str, first_line: str) -> str:
    """The format named by the extension, else guessed from the first non-empty line."""
    by_extension = _EXTENSIONS.get(Path(name).suffix.lower())
    if by_extension:
        return by_extension
    text = first_line.strip()
    if text.startswith("{"):
        return "jsonl"
    header = next(csv.reader([text]), [])
    return "csv" if "loc" in (cell.strip().lower() for cell in header) else "txt"


def jsonl_records(lines: Iterable[tuple[int, bytes]], *, bom_line: int = 1) -> Iterator[Record]:
    """One object per line; keys besides the entry fields are ignored, ``null`` is absent.

    ``bom_line`` (in every reader): the number of the input's first line, which may start
    with a UTF-8 byte order mark; 0 when these lines are from further on.
    """
    # The decoder's own method: json.loads re-checks its arguments and sniffs the encoding
    # of bytes on every call, which costs a third of the parsing itself.
    decode = json.JSONDecoder().decode
    for number, raw in lines:
        try:
            line = _text(raw, number, bom_line)
        except UnicodeDecodeError:
            yield number, "not UTF-8"
            continue
        if too_deep(raw):
            yield number, f"not JSON (nested more than {MAX_JSON_DEPTH} levels deep)"
            continue
        try:
            value = decode(line)
        except (ValueError, RecursionError) as exc:  # RecursionError: never expected (too_deep)
            if line.strip():  # blank lines are no entries, not bad ones
                yield number, f"not JSON ({exc})"
            continue
        if isinstance(value, dict):
            yield number, value
        else:
            yield number, f"not a JSON object: {line.strip()[:80]!r}"


def _text(raw: bytes, number: int, bom_line: int) -> str:
    """Line ``number`` as text (UnicodeDecodeError if it is not UTF-8); a byte order mark is
    dropped from the input's first line only (``bom_line``, see ``jsonl_records``)."""
    return raw.decode("utf-8-sig" if number == bom_line else "utf-8")


def too_deep(raw: bytes) -> bool:
    """True if the JSON text ``raw`` nests arrays and objects more than MAX_JSON_DEPTH deep."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_JSON_DEPTH:
        return False  # the common case: two C-level counts
    depth = deepest = 0
    for bracket in re.findall(rb"[\[\]{}]", _JSON_STRING.sub(b"", raw)):
        depth += 1 if bracket in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest > MAX_JSON_DEPTH


def _text_lines(lines: Iterable[tuple[int, bytes]], bad: set[int], bom_line: int) -> Iterator[str]:
    # The csv module wants str; an undecodable line is remembered in ``bad`` and read as empty.
    for number, raw in lines:
        try:
            yield _text(raw, number, bom_line)
        except UnicodeDecodeError:
            bad.add(number)
            yield "\n"


def csv_records(lines: Iterable[tuple[int, bytes]], *, bom_line: int = 1) -> Iterator[Record]:
    """CSV with a header naming the columns; a ``loc`` column is required, empty cells are absent."""
    bad: set[int] = set()
    reader = csv.reader(_text_lines(lines, bad, bom_line))
    # The header is the first row that is not blank.
    header = [cell.strip().lower() for cell in next((row for row in reader if any(row)), [])]
    if "loc" not in header:
        raise BadInput(f"the CSV header has no 'loc' column: {header}")
    columns = [(index, name) for index, name in enumerate(header) if name in _FIELDS]
    while True:
        # A quoted cell may span lines: a record is numbered by its first line.
        number = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield number, f"not CSV ({exc})"
            continue
        if bad:
            spanned = {n for n in bad if n <= reader.line_num}
            if spanned:
                bad -= spanned
                yield number, "not UTF-8"
                continue
        if any(cell.strip() for cell in row):
            yield number, {name: row[index].strip() or None for index, name in columns if index < len(row)}


def text_records(lines: Iterable[tuple[int, bytes]], *, bom_line: int = 1) -> Iterator[Record]:
    """One URL per line; blank lines and ``#`` comments are skipped."""
    for number, raw in lines:
        try:
            url = _text(raw, number, bom_line).strip()
        except UnicodeDecodeError:
            yield number, "not UTF-8"
            continue
        if url and not url.startswith("#"):
            yield number, {"loc": url}


READERS: Final = {"jsonl": jsonl_records, "csv": csv_records, "txt": text_records}


def read_records(stream: io.BufferedIOBase, name: str, forced: str | None) -> tuple[str, Iterator[Record]]:
    """Pick the format (``forced``, the extension or a look at the first line) and read it."""
    lines = enumerate(stream, 1)
    head: list[tuple[int, bytes]] = []
    for number, line in lines:
        head.append((number, line))
        if (line.removeprefix(_BOM) if number == 1 else line).strip():  # a mark alone is a blank line
            break
    first = head[-1][1].decode("utf-8", "replace").lstrip("\ufeff") if head else ""
    kind = forced or sniff_format(name, first)
    return kind, READERS[kind](itertools.chain(head, lines))
