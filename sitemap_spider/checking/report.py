"""What ``scrapy validate`` prints: a summary for people, JSON for machines, and the exit code."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from sitemap_spider.checking.findings import VALIDATE_RULES, Rule, Severity
from sitemap_spider.checking.session import Session

EXIT_VALID: Final = 0
EXIT_ERRORS: Final = 1
EXIT_UNREADABLE: Final = 2


def exit_code(session: Session, strict: bool = False) -> int:
    """0: valid (warnings allowed unless ``strict``); 1: at least one error (or, ``strict``, a
    warning); 2: an input could not be read at all."""
    if session.unread_inputs:
        return EXIT_UNREADABLE
    failing = session.log.count(Severity.ERROR) + (session.log.count(Severity.WARNING) if strict else 0)
    return EXIT_ERRORS if failing else EXIT_VALID


def summary(session: Session, strict: bool = False) -> dict[str, object]:
    log = session.log
    return {
        "files": len(session.documents),
        "urls": sum(d.entries for d in session.documents if d.kind != "sitemapindex"),
        "errors": log.count(Severity.ERROR),
        "warnings": log.count(Severity.WARNING),
        "by_rule": dict(sorted(log.by_rule.items())),
        "not_listed": log.not_listed,
        "unread_inputs": list(session.unread_inputs),
        "allowed_by_robots": session.allowed_by_robots,
        "exit_code": exit_code(session, strict),
    }


def as_json(session: Session, strict: bool = False, extra: Mapping[str, object] | None = None) -> str:
    """``{"files": [...], "findings": [...], "summary": {...}}``, one finding shape for validate and audit;
    ``extra``: more summary fields (the audit's)."""
    files = [
        {"file": d.name, "location": d.location, "kind": d.kind, "entries": d.entries, "bytes": d.bytes}
        for d in session.documents
    ]
    findings = [finding.as_json() for finding in session.log.listed]
    facts = {**summary(session, strict), **(extra or {})}
    return json.dumps({"files": files, "findings": findings, "summary": facts}, indent=2)


def as_text(session: Session, strict: bool = False, finding_lines: list[str] | None = None) -> str:
    """Findings, one per line (or ``finding_lines`` in their place), then what was read and the verdict."""
    lines = list(finding_lines) if finding_lines is not None else [f.as_text() for f in session.log.listed]
    if session.log.not_listed:
        lines.append(f"... and {session.log.not_listed:,} more finding(s) of the same rules, not listed")
    facts = summary(session, strict)
    for document in session.documents:
        kind = document.kind or "not a sitemap"
        lines.append(f"read {document.name}: {kind}, {document.entries:,} entries, {document.bytes:,} bytes")
    if session.allowed_by_robots:
        lines.append(
            f"{session.allowed_by_robots:,} URL(s) on other hosts allowed by their robots.txt Sitemap: lines"
        )
    by_rule = ", ".join(f"{rule} {count:,}" for rule, count in sorted(session.log.by_rule.items()))
    verdict = {0: "valid", 1: "INVALID", 2: "COULD NOT READ"}[exit_code(session, strict)]
    if strict and verdict == "INVALID" and not session.log.count(Severity.ERROR):
        verdict = "INVALID (--strict: warnings fail)"
    lines.append(
        f"{verdict}: {facts['files']} file(s), {facts['urls']:,} URL(s); "
        f"{facts['errors']:,} error(s), {facts['warnings']:,} warning(s)"
        + (f" ({by_rule})" if by_rule else "")
    )
    return "\n".join(lines)


def rules_table(rules: Mapping[str, Rule] = VALIDATE_RULES) -> str:
    """A README table of rules (kept in step by a test)."""
    rows = ["| rule | severity | meaning |", "| --- | --- | --- |"]
    rows += [f"| `{rule_id}` | {rule.severity} | {rule.meaning} |" for rule_id, rule in rules.items()]
    return "\n".join(rows)
