"""A problem the validator found, and the report of one run."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Problem", "ValidationReport"]


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: [{self.rule}] {self.message}"


@dataclass
class ValidationReport:
    files: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    info: list[str] = field(default_factory=list)
    """Set-level summaries that are not problems (printed as ``info:`` lines), e.g. decisive-fact coverage."""

    @property
    def ok(self) -> bool:
        return bool(self.files) and not self.problems

    def format(self) -> str:
        if not self.files:
            return "no scenario files found"
        lines = [str(p) for p in self.problems]
        lines += [f"info: {line}" for line in self.info]
        lines.append(f"{len(self.files)} scenario file(s), {len(self.problems)} problem(s)")
        return "\n".join(lines)
