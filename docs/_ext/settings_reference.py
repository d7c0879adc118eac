"""The settings reference, generated from the commented defaults of sitemap_spider/default_settings.py.

``default_settings.py`` is the one source: each assignment is a setting, the ``#`` lines right
above it are its description (a setting written on the line after another shares its block),
and a ``# --- Title ---`` line opens a section. The accepted range of a number comes from the
``read_number(settings, NAME, kind, low, high)`` call that validates it, so the reference says
what the code enforces. The directive ``settings-reference`` writes it all as sections, and
registers each name for the ``setting`` role, so that ``{setting}`SITEMAP_GZIP``` in any page
links to it and a misspelt name is a warning of a nitpicky build.
"""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

PACKAGE = Path(__file__).resolve().parents[2] / "sitemap_spider"
DEFAULTS = PACKAGE / "default_settings.py"
SECTION_LINE = re.compile(r"#\s*---\s*(?P<title>.*?)\s*-*\s*$")
CODE_SPAN = re.compile(r"`([^`]+)`")
SETTING_NAME = re.compile(r"\b(SITEMAP_[A-Z_]+[A-Z])\b")


@dataclass
class Setting:
    """One assignment of default_settings.py."""

    name: str
    default: str
    kind: str
    description: str
    accepted: str | None = None


@dataclass
class Section:
    """The settings under one ``# --- Title ---`` line."""

    title: str
    settings: list[Setting] = field(default_factory=list)


def _comment_block(lines: list[str], lineno: int) -> list[str]:
    """The ``#`` lines right above line ``lineno`` (1-based), section lines excluded."""
    block: list[str] = []
    index = lineno - 2
    while index >= 0 and lines[index].lstrip().startswith("#"):
        if SECTION_LINE.match(lines[index].strip()):
            break
        block.insert(0, lines[index].strip().lstrip("#").strip())
        index -= 1
    return block


def _kind(node: ast.Assign | ast.AnnAssign, source: str) -> str:
    if isinstance(node, ast.AnnAssign):
        return ast.get_source_segment(source, node.annotation) or ""
    try:
        return type(ast.literal_eval(node.value)).__name__
    except ValueError:
        return type(eval(compile(ast.Expression(node.value), "<default>", "eval"))).__name__  # noqa: S307


def _default(node: ast.expr, source: str) -> str:
    text = ast.get_source_segment(source, node) or ""
    try:
        ast.literal_eval(node)
    except ValueError:  # arithmetic such as 16 * 1024 * 1024: show its value too
        return f"{text} = {eval(compile(ast.Expression(node), '<default>', 'eval'))!r}"  # noqa: S307
    return " ".join(text.split()).replace("[ ", "[").replace(", ]", "]")


def _number(value: float) -> str:
    """50,000; 3,600; 0.1."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def read_sections(path: Path = DEFAULTS) -> list[Section]:
    """Every setting of the module at ``path``, in order, under its section, with its comment block."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    titles = {n + 1: m["title"] for n, line in enumerate(lines) if (m := SECTION_LINE.match(line.strip()))}
    sections: list[Section] = []
    previous_end = -1
    description = ""
    for node in ast.parse(source).body:
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        assert isinstance(target, ast.Name), ast.dump(target)
        opened = [title for line, title in titles.items() if previous_end < line < node.lineno]
        if opened or not sections:
            sections.append(Section(opened[-1] if opened else "Settings"))
        block = _comment_block(lines, node.lineno)
        if block or node.lineno != previous_end + 1:
            description = " ".join(block)
        setting = Setting(target.id, _default(node.value, source), _kind(node, source), description)
        sections[-1].settings.append(setting)
        previous_end = node.end_lineno or node.lineno
    return sections


def accepted_ranges(package: Path = PACKAGE) -> dict[str, str]:
    """``{name: "low to high"}`` of every ``read_number(settings, "NAME", kind, low, high)`` call."""
    ranges: dict[str, str] = {}
    for path in sorted(package.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [
            call for call in ast.walk(tree)
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "read_number"
            and len(call.args) == 5 and isinstance(call.args[1], ast.Constant)
        ]  # fmt: skip
        if not calls:
            continue
        namespace = vars(importlib.import_module(f"{package.name}.{path.stem}"))
        for call in calls:
            name = call.args[1]
            assert isinstance(name, ast.Constant) and isinstance(name.value, str), ast.dump(name)
            low, high = (eval(compile(ast.Expression(arg), str(path), "eval"), namespace) for arg in call.args[3:])  # noqa: S307
            ranges[name.value] = f"{_number(low)} to {_number(high)}"
    return ranges


def _inline(text: str) -> list[nodes.Node]:
    """A comment's text: `code` as literals, and every SITEMAP_ name a link to its entry."""
    result: list[nodes.Node] = []
    for index, part in enumerate(CODE_SPAN.split(text)):
        if index % 2:
            result.append(nodes.literal(part, part))
            continue
        for piece_index, piece in enumerate(SETTING_NAME.split(part)):
            if piece_index % 2:
                result.append(_setting_link(piece))
            elif piece:
                result.append(nodes.Text(piece))
    return result


def _setting_link(name: str) -> nodes.Node:
    from sphinx.addnodes import pending_xref

    ref = pending_xref("", refdomain="std", reftype="setting", reftarget=name, refexplicit=False)
    ref += nodes.literal(name, name)
    return ref


class SettingsReference(SphinxDirective):
    """``.. settings-reference::``: every setting of default_settings.py, one section each."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        self.env.note_dependency(str(DEFAULTS))
        ranges = accepted_ranges()
        std: Any = self.env.get_domain("std")
        out: list[nodes.Node] = []
        for section in read_sections():
            group = nodes.section(ids=[nodes.make_id(f"settings-{section.title}")])
            group += nodes.title(section.title, section.title)
            for setting in section.settings:
                node_id = nodes.make_id(f"setting-{setting.name}")
                entry = nodes.section(ids=[node_id])
                entry += nodes.title(setting.name, "", nodes.literal(setting.name, setting.name))
                facts = nodes.paragraph()
                facts += [nodes.strong("Default: ", "Default: "), nodes.literal(setting.default, setting.default)]
                facts += [nodes.Text(" · type "), nodes.literal(setting.kind, setting.kind)]
                if setting.name in ranges:
                    facts += [nodes.Text(f" · accepted: {ranges[setting.name]}")]
                entry += facts
                if setting.description:
                    entry += nodes.paragraph("", "", *_inline(setting.description))
                std.note_object("setting", setting.name, node_id, location=entry)
                group += entry
            out.append(group)
        return out


def setup(app: Sphinx) -> dict[str, object]:
    """Register the ``setting`` object type and role and the ``settings-reference`` directive."""
    app.add_object_type("setting", "setting", indextemplate="pair: %s; setting")
    app.add_directive("settings-reference", SettingsReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
