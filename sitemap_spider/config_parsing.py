"""Reading one setting or spider argument (see :mod:`sitemap_spider.config`): its type, its range,
and the :class:`ConfigError` that names it when it is wrong.

Settings arrive as Python values (settings.py) or as strings (``-s``, Scrapyd): each reader
takes both.
"""

from __future__ import annotations

import difflib
import json
import logging
import math
import os
import re
from collections.abc import Iterable, Mapping
from importlib.util import find_spec
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from scrapy.settings import BaseSettings

from sitemap_spider.history.location import HistoryLocation
from sitemap_spider.render.signs import RENDER_MODES
from sitemap_spider.sitemaps import (
    CHANGEFREQ_VALUES,
    BucketTarget,
    SitemapGroup,
    group_name_problem,
    normalize_url,
    parse_bucket_uri,
)
from sitemap_spider.writable import write_problem

CHANGEFREQS = CHANGEFREQ_VALUES  # in the order error messages list them

_Number = TypeVar("_Number", int, float)


class ConfigError(ValueError):
    """A bad setting or spider argument; the message starts with its name."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"{name}: {problem}")
        self.name = name


@dataclass(frozen=True)
class Rule:
    """``changefreq`` / ``priority`` for the URLs a pattern matches."""

    pattern: re.Pattern[str]
    changefreq: str | None
    priority: float | None


def parse_absolute_url(name: str, value: str, strip_params: tuple[str, ...] = ()) -> str:
    """``value`` as a normalised absolute http(s) URL."""
    url = normalize_url(value, strip_params)
    if url is None or "://" not in value:
        raise ConfigError(name, f"needs an absolute http(s) URL, got {value!r}")
    return url


def parse_render_mode(name: str, value: Any) -> str:
    """never, auto or always."""
    mode = str(value).strip().lower()
    if mode not in RENDER_MODES:
        raise ConfigError(name, f"must be one of {', '.join(RENDER_MODES)}, got {value!r}")
    return mode


def read_text(settings: BaseSettings, name: str) -> str | None:
    """A string setting, stripped; None when unset or blank."""
    value = settings.get(name)
    if value is None:
        return None
    if not isinstance(value, (str, Path)):
        raise ConfigError(name, f"must be a string, got {value!r}")
    return str(value).strip() or None


#: Words a true / false setting also takes, as ``-s SITEMAP_XSL=on`` reads.
_SWITCH_WORDS = {"on": True, "yes": True, "off": False, "no": False}


def read_bool(settings: BaseSettings, name: str) -> bool:
    """A true / false setting: what Scrapy's ``getbool`` takes (True, "true", 1, ...), or on / off."""
    raw = settings.get(name)
    if isinstance(raw, str) and raw.strip().lower() in _SWITCH_WORDS:
        return _SWITCH_WORDS[raw.strip().lower()]
    try:
        return settings.getbool(name)
    except ValueError:
        raise ConfigError(name, f"must be true or false (or on / off), got {raw!r}") from None


def read_choice(settings: BaseSettings, name: str, choices: tuple[str, ...]) -> str:
    """One of ``choices`` (the first is the default), in any case."""
    value = str(settings.get(name, choices[0])).strip().lower()
    if value not in choices:
        raise ConfigError(name, f"must be one of {', '.join(choices)}, got {value!r}")
    return value


def read_number(
    settings: BaseSettings, name: str, kind: type[_Number], low: _Number, high: _Number
) -> _Number:
    """A setting read as ``kind`` (int: a whole number; float: any number), from ``low`` to ``high``."""
    whole = kind is int
    what = "a whole number" if whole else "a number"
    spec = "," if whole else "g"  # 50,000 URLs; 0.1 seconds
    raw = settings.get(name)
    try:
        value = kind(raw)
    except (TypeError, ValueError):
        raise ConfigError(name, f"must be {what}, got {raw!r}") from None
    if whole and isinstance(raw, float) and raw != value:  # int() would drop the fraction
        raise ConfigError(name, f"must be {what}, got {raw!r}")
    if not low <= value <= high:
        raise ConfigError(name, f"must be between {low:{spec}} and {high:{spec}}, got {value:{spec}}")
    return value


def read_workers(settings: BaseSettings, name: str) -> int:
    """A number of crawling processes, or "auto": one per core, at most two."""
    if str(settings.get(name)).strip().lower() == "auto":
        return max(1, min(2, os.cpu_count() or 1))
    return read_number(settings, name, int, 1, 2)


def _json_or(settings: BaseSettings, name: str, *, lenient: bool = False) -> Any:
    """A list-valued setting: a Python value, or a JSON string from ``-s``.

    ``lenient``: a string that is not JSON is the value itself (a regex such
    as ``[0-9]+/`` starts like a JSON list).
    """
    value = settings.get(name)
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            if lenient:
                return value
            raise ConfigError(name, f"is not valid JSON: {exc}") from None
    return value


def read_strings(settings: BaseSettings, name: str) -> tuple[str, ...]:
    """A list of strings: a list, a JSON list, or a comma-separated string."""
    value = _json_or(settings, name)
    if value is None:
        return ()
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(name, f"must be a list of strings, got {value!r}")
    return tuple(v.strip() for v in value if v.strip())


def _compile(name: str, pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigError(name, f"bad regular expression {pattern!r}: {exc}") from None


def read_patterns(settings: BaseSettings, name: str) -> tuple[re.Pattern[str], ...]:
    """Regular expressions: a list, a JSON list, or one pattern."""
    value = _json_or(settings, name, lenient=True)
    if value is None or value == "":
        return ()
    # A lone pattern is not split on commas: "a{1,3}" is one regex.
    patterns = [value] if isinstance(value, str) else value
    if not isinstance(patterns, (list, tuple)) or not all(isinstance(p, str) for p in patterns):
        raise ConfigError(name, f"must be a list of regular expressions, got {value!r}")
    return tuple(_compile(name, p) for p in patterns)


def read_base_url(settings: BaseSettings, name: str) -> str | None:
    """An absolute URL without a query, ending in ``/``; None when unset."""
    value = read_text(settings, name)
    if value is None:
        return None
    url = parse_absolute_url(name, value)
    if urlsplit(url).query:
        raise ConfigError(name, f"must not have a query, got {value!r}")
    return url if url.endswith("/") else url + "/"


def read_rules(settings: BaseSettings, name: str) -> tuple[Rule, ...]:
    """A list of ``{pattern, changefreq, priority}`` objects."""
    value = _json_or(settings, name)
    if not value:
        return ()
    if not isinstance(value, (list, tuple)):
        raise ConfigError(name, f"must be a list of {{pattern, changefreq, priority}} objects, got {value!r}")
    return tuple(_rule(f"{name}[{index}]", item) for index, item in enumerate(value))


def _rule(where: str, item: Any) -> Rule:
    if not isinstance(item, Mapping) or not isinstance(item.get("pattern"), str):
        raise ConfigError(where, f"needs a 'pattern' string, got {item!r}")
    extra = set(item) - {"pattern", "changefreq", "priority"}
    if extra:
        raise ConfigError(where, f"unknown keys {sorted(extra)}")
    changefreq = item.get("changefreq")
    if changefreq is not None and changefreq not in CHANGEFREQS:
        raise ConfigError(where, f"changefreq must be one of {', '.join(CHANGEFREQS)}, got {changefreq!r}")
    priority = _priority(where, item.get("priority"))
    if changefreq is None and priority is None:
        raise ConfigError(where, "sets neither changefreq nor priority")
    return Rule(_compile(where, item["pattern"]), changefreq, priority)


def read_bucket(settings: BaseSettings, name: str) -> BucketTarget | None:
    """``SITEMAP_OUTPUT_URI``: an ``s3://`` bucket and prefix, with Scrapy's AWS_* settings; None: unset."""
    uri = read_text(settings, name)
    if uri is None:
        return None
    try:
        parse_bucket_uri(uri)
    except ValueError as exc:
        raise ConfigError(name, str(exc)) from None
    if find_spec("botocore") is None:
        raise ConfigError(name, "needs botocore: pip install 'sitemap_spider[s3]' (or botocore)")
    # AWS_VERIFY, as Scrapy reads it: unset, a boolean, or the path of a CA bundle.
    verify = settings.get("AWS_VERIFY")
    if isinstance(verify, str) and verify.lower() in ("true", "false", "1", "0"):
        verify = settings.getbool("AWS_VERIFY")
    return BucketTarget(
        uri=uri,
        access_key=settings.get("AWS_ACCESS_KEY_ID") or None,
        secret_key=settings.get("AWS_SECRET_ACCESS_KEY") or None,
        session_token=settings.get("AWS_SESSION_TOKEN") or None,
        endpoint_url=settings.get("AWS_ENDPOINT_URL") or None,
        region=settings.get("AWS_REGION_NAME") or None,
        verify=verify,
        use_ssl=settings.getbool("AWS_USE_SSL", True),
    )


def read_groups(settings: BaseSettings, name: str) -> tuple[SitemapGroup, ...]:
    """A list of ``{group, prefix}`` or ``{group, pattern}`` objects, names unique."""
    value = _json_or(settings, name)
    if not value:
        return ()
    if not isinstance(value, (list, tuple)):
        raise ConfigError(name, f"must be a list of {{group, prefix or pattern}} objects, got {value!r}")
    groups = tuple(_group(f"{name}[{index}]", item) for index, item in enumerate(value))
    seen: set[str] = set()
    for index, group in enumerate(groups):
        if group.name in seen:
            raise ConfigError(f"{name}[{index}]", f"group {group.name!r} is named by an earlier rule too")
        seen.add(group.name)
    return groups


def _group(where: str, item: Any) -> SitemapGroup:
    if not isinstance(item, Mapping) or "group" not in item:
        raise ConfigError(where, f"needs a 'group' name, got {item!r}")
    extra = set(item) - {"group", "prefix", "pattern"}
    if extra:
        raise ConfigError(where, f"unknown keys {sorted(extra)}")
    problem = group_name_problem(item["group"])
    if problem is not None:
        raise ConfigError(where, f"group {problem}")
    prefix, pattern = item.get("prefix"), item.get("pattern")
    if (prefix is None) == (pattern is None):
        raise ConfigError(where, "needs either a 'prefix' (a URL path) or a 'pattern' (a regular expression)")
    if prefix is not None:
        if not isinstance(prefix, str) or not prefix.startswith("/"):
            raise ConfigError(where, f"prefix must be a URL path starting with '/', got {prefix!r}")
        return SitemapGroup(item["group"], prefix=_path_prefix(prefix))
    if not isinstance(pattern, str):
        raise ConfigError(where, f"pattern must be a regular expression, got {pattern!r}")
    return SitemapGroup(item["group"], pattern=_compile(where, pattern))


def _path_prefix(prefix: str) -> str:
    """A group's path prefix as a loc spells it. A loc holds no raw non-ASCII character nor
    white space: a prefix holding one (``/博客/``, ``/my docs/``) is put in the normal form the
    crawl and ``scrapy publish`` give such a path (``/%E5%8D%9A%E5%AE%A2/``), else it would match
    nothing. Any other prefix is compared as given."""
    if (prefix.isascii() and not any(char.isspace() for char in prefix)) or "?" in prefix or "#" in prefix:
        return prefix
    normal = normalize_url("http://prefix.invalid" + prefix)
    return prefix if normal is None else normal[len("http://prefix.invalid"):]


def _priority(where: str, value: Any) -> float | None:
    if value is None:
        return None
    problem = f"priority must be a number from 0.0 to 1.0, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ConfigError(where, problem)
    try:
        priority = float(value)
    except ValueError:
        raise ConfigError(where, problem) from None
    if math.isnan(priority) or not 0.0 <= priority <= 1.0:
        raise ConfigError(where, f"priority must be a number from 0.0 to 1.0, got {priority!r}")
    return priority


def read_history(settings: BaseSettings, name: str) -> HistoryLocation:
    """``SITEMAP_HISTORY``: unset for the default place, off (or empty) for none, else the file."""
    value = settings.get(name)
    if value is not None and not isinstance(value, (str, Path)):
        raise ConfigError(name, f"must be a path or off, got {value!r}")
    return HistoryLocation.from_value(None if value is None else str(value))


def check_output_dir(output_dir: Path) -> None:
    """``SITEMAP_OUTPUT_DIR``, before any request: :class:`ConfigError` when no file can be made there."""
    problem = write_problem(output_dir)
    if problem is not None:
        raise ConfigError(
            "SITEMAP_OUTPUT_DIR", f"the sitemap files cannot be written in {output_dir}: {problem}"
        )


logger = logging.getLogger(__name__)
_warned: set[str] = set()


def warn_unknown_settings(settings: BaseSettings) -> None:
    """Warn once of each ``SITEMAP_*`` setting that is none of ours: a typo (``SITEMAP_GZIPP=1``) was
    ignored without a word. A warning, not a refusal: another component may name its own so."""
    import sitemap_spider.default_settings as default_settings  # noqa: PLR0402 - here: config imports this module

    known = {name for name in dir(default_settings) if name.startswith("SITEMAP_")}
    for name in sorted(key for key in settings.attributes if isinstance(key, str) and key.startswith("SITEMAP_")):
        if name in known or name in _warned:
            continue
        _warned.add(name)
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
        hint = f" (did you mean {close[0]}?)" if close else ""
        logger.warning("%s is not a setting of sitemap_spider%s: it is ignored", name, hint)


def warned_elsewhere(names: Iterable[str]) -> None:
    """The settings another process of the same crawl named already (a two-process crawl's helper
    gets the leader's settings): not named again, once per crawl."""
    _warned.update(name for name in names if name.startswith("SITEMAP_"))
