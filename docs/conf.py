"""Sphinx configuration of the sitemap_spider manual (built by tests/test_docs.py with -W -n)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE / "_ext"), str(HERE.parent)]  # the extension, and the package it reads

project = "sitemap_spider"
author = "the sitemap_spider authors"
extensions = ["myst_parser", "settings_reference"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
html_theme = "alabaster"
# MyST turns `#` headings into link targets, so [text](page.md#a-heading) is checked as well.
myst_heading_anchors = 3
nitpicky = True
