"""Findings, per-file reports, and their text and JSON renderings."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from django_sitemaps_plus.validation.rules import RULES, Rule, Severity

FailLevel = Literal["error", "warning", "info"]
SitemapKind = Literal["urlset", "sitemapindex", "text"]

#: Findings kept per file by default; more are counted but not stored, so a
#: hostile file cannot exhaust memory with findings.
DEFAULT_MAX_FINDINGS = 1_000


@dataclass(frozen=True, slots=True)
class Finding:
    rule: Rule
    message: str
    line: int | None = None
    column: int | None = None
    url: str | None = None

    @property
    def severity(self) -> Severity:
        return self.rule.severity

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule.id,
            "title": self.rule.title,
            "element": self.rule.element,
            "severity": self.rule.severity.value,
            "source": self.rule.source.value,
            "line": self.line,
            "column": self.column,
            "url": self.url,
            "message": self.message,
            "hint": self.rule.hint,
        }

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line is not None else "file"
        if self.column is not None:
            where += f", column {self.column}"
        url = f" [{self.url}]" if self.url else ""
        rule = self.rule
        return (
            f"{where}: {rule.id} {rule.severity.value} ({rule.source.value}) {rule.title}: "
            f"{self.message}{url}"
        )


def _zero_counts() -> dict[Severity, int]:
    return dict.fromkeys(Severity, 0)


@dataclass
class FileReport:
    """What one file (or URL) holds and what is wrong with it."""

    target: str
    kind: SitemapKind | None = None
    entries: int = 0
    uncompressed_bytes: int = 0
    findings: list[Finding] = field(default_factory=list)
    counts: dict[Severity, int] = field(default_factory=_zero_counts)
    #: Findings counted but not stored (beyond ``max_findings``).
    omitted: int = 0
    max_findings: int | None = DEFAULT_MAX_FINDINGS
    ignored: frozenset[str] = frozenset()

    def add(
        self,
        rule_id: str,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        url: str | None = None,
    ) -> None:
        if rule_id in self.ignored:
            return
        rule = RULES[rule_id]
        self.counts[rule.severity] += 1
        if self.max_findings is not None and len(self.findings) >= self.max_findings:
            self.omitted += 1
            return
        self.findings.append(Finding(rule, message, line, column, url))

    def rule_ids(self) -> set[str]:
        return {finding.rule.id for finding in self.findings}

    def summary(self) -> dict[str, int]:
        return _summary(self.counts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "kind": self.kind,
            "entries": self.entries,
            "findings": [finding.as_dict() for finding in self.findings],
            "omitted": self.omitted,
            "summary": self.summary(),
        }


def _summary(counts: dict[Severity, int]) -> dict[str, int]:
    return {
        "errors": counts[Severity.ERROR],
        "warnings": counts[Severity.WARNING],
        "info": counts[Severity.INFO],
    }


@dataclass
class Report:
    """The result of one validation run: one ``FileReport`` per file visited."""

    files: list[FileReport] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return [finding for file in self.files for finding in file.findings]

    def rule_ids(self) -> set[str]:
        return {finding.rule.id for finding in self.findings}

    def counts(self) -> dict[Severity, int]:
        total = _zero_counts()
        for file in self.files:
            for severity, count in file.counts.items():
                total[severity] += count
        return total

    def summary(self) -> dict[str, int]:
        return _summary(self.counts())

    def fails(self, fail_level: FailLevel | Severity = "error") -> bool:
        """Whether any finding (stored or omitted) is at or above ``fail_level``."""
        threshold = Severity(fail_level).rank
        return any(
            count and severity.rank >= threshold for severity, count in self.counts().items()
        )

    def findings_at(self, fail_level: FailLevel | Severity) -> list[Finding]:
        threshold = Severity(fail_level).rank
        return [finding for finding in self.findings if finding.severity.rank >= threshold]

    def as_dict(self) -> dict[str, Any]:
        return {"files": [file.as_dict() for file in self.files], "summary": self.summary()}


def summary_line(summary: dict[str, int]) -> str:
    def plural(count: int, word: str) -> str:
        return f"{count} {word}" if count == 1 else f"{count} {word}s"

    return (
        f"{plural(summary['errors'], 'error')}, "
        f"{plural(summary['warnings'], 'warning')}, {summary['info']} info"
    )


_SEVERITY_ORDER = (Severity.ERROR, Severity.WARNING, Severity.INFO)
_SEVERITY_HEADINGS = {Severity.ERROR: "Errors", Severity.WARNING: "Warnings", Severity.INFO: "Info"}


def render_text(report: Report) -> str:
    """Findings grouped by file, then severity; ends with the overall summary."""
    lines: list[str] = []
    for file in report.files:
        noun = "entry" if file.entries == 1 else "entries"
        kind = f" ({file.kind}, {file.entries:,} {noun})" if file.kind else ""
        lines.append(f"{file.target}{kind}")
        for severity in _SEVERITY_ORDER:
            group = [finding for finding in file.findings if finding.severity is severity]
            if not group:
                continue
            lines.append(f"  {_SEVERITY_HEADINGS[severity]}:")
            for finding in group:
                lines.extend(_text_finding(finding))
        if file.omitted:
            noun = "finding" if file.omitted == 1 else "findings"
            lines.append(f"  ... {file.omitted:,} more {noun} not shown (--max-findings)")
        if not any(file.counts.values()):
            lines.append("  no findings")
        lines.append(f"  {summary_line(file.summary())}")
    lines.append(summary_line(report.summary()))
    return "\n".join(lines) + "\n"


def _text_finding(finding: Finding) -> Iterable[str]:
    where = f"{finding.line}" if finding.line is not None else "-"
    if finding.column is not None:
        where += f":{finding.column}"
    rule = finding.rule
    # The title says what the finding is about; the message, what was found.
    yield f"    {where}: {rule.id} [{rule.source.value}] {rule.title}: {finding.message}"
    yield f"      about: {rule.element}"
    if finding.url:
        yield f"      url: {finding.url}"
    yield f"      hint: {rule.hint}"


def render_json(report: Report) -> str:
    return json.dumps(report.as_dict(), indent=2, ensure_ascii=False) + "\n"
