"""Validating whole sources (files, directories, texts, cluster lists): per-file and per-definition results.

`check_files(paths)` is what `wmap validate FILE...` prints and exits with:
- `OK: <name>` for each definition without errors (its warnings indented below it), exit 0;
- `INVALID: <name> (<source>)` with every error and warning indented below it (`INVALID: <source>` when the
  definition could not be loaded, so has no name); exit 1 if any definition is invalid or a file holds none;
- `error: <file>: <why>` for a file that cannot be read or is not YAML/JSON; exit 2 (wins over 1);
- a directory below one given that cannot be listed, or a file in it that cannot be opened (a dangling or looping
  symbolic link; `FileReport.partial`): named, the rest is checked, exit 1 (a partial result; `wmap validate`
  prints it as a warning), as every command treats an unreadable file inside a directory.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from workload_map.errors import ArgumentTypeError
from workload_map.model import DefinitionError, Karta, scan_definitions
from workload_map.model.load import DefinitionSource
from workload_map.model.yamlio import is_directory, iter_files, unreadable_directories
from workload_map.validation.findings import ERROR, WARNING, Finding
from workload_map.validation.rules import validate

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_UNREADABLE = 2


@dataclass(frozen=True)
class DefinitionReport:
    """The findings of one definition. `karta` is None when it could not be loaded (the finding says why)."""

    source: str
    name: str
    findings: tuple[Finding, ...]
    karta: Karta | None = None

    @property
    def valid(self) -> bool:
        return not any(f.severity == ERROR for f in self.findings)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == WARNING]

    def lines(self) -> list[str]:
        if self.valid:
            head = f"OK: {self.name}"
        else:
            head = f"INVALID: {self.name}" if self.name == self.source else f"INVALID: {self.name} ({self.source})"
        return [head, *(f"  {finding}" for finding in self.findings)]


@dataclass(frozen=True)
class FileReport:
    """One input file: its definitions, or the problem that kept us from reading any."""

    path: str
    definitions: tuple[DefinitionReport, ...] = ()
    problem: str | None = None
    unreadable: bool = False  # cannot be read, or is not YAML/JSON (exit 2)
    partial: bool = False  # a directory below one given that cannot be listed: the rest is checked (exit 1)

    @property
    def valid(self) -> bool:
        return self.problem is None and all(d.valid for d in self.definitions)

    def lines(self) -> list[str]:
        out = [f"error: {self.path}: {self.problem}"] if self.problem else []
        for definition in self.definitions:
            out += definition.lines()
        return out


@dataclass(frozen=True)
class ValidationReport:
    files: tuple[FileReport, ...] = field(default_factory=tuple)

    @property
    def definitions(self) -> list[DefinitionReport]:
        return [d for f in self.files for d in f.definitions]

    @property
    def valid(self) -> bool:
        return all(f.valid for f in self.files)

    @property
    def exit_code(self) -> int:
        if any(f.unreadable for f in self.files):
            return EXIT_UNREADABLE
        return EXIT_OK if self.valid else EXIT_INVALID

    def lines(self) -> list[str]:
        """The text `wmap validate` prints, one line per entry (findings indented under their definition)."""
        return [line for f in self.files for line in f.lines()]


def _definition_report(label: str, item: Karta | DefinitionError) -> DefinitionReport:
    if isinstance(item, DefinitionError):
        finding = Finding(ERROR, item.path, item.message, "load")
        return DefinitionReport(source=item.source or label, name=label, findings=(finding,))
    name = item.metadata.name or item.root.name or label
    return DefinitionReport(source=label, name=name, findings=tuple(validate(item)), karta=item)


def validate_documents(source: DefinitionSource) -> list[DefinitionReport]:
    """Load every definition of `source` (text, file, directory, dicts such as a cluster's list) and validate
    each; a definition that cannot be loaded is reported with a `load` finding instead of raising."""
    return [_definition_report(label, item) for label, item in scan_definitions(source).items]


def check_file(path: str | Path) -> FileReport:
    """Validate one file (`-` is standard input)."""
    label = "<stdin>" if str(path) == "-" else str(path)
    result = scan_definitions(Path(path))
    for _, item in result.items:
        if isinstance(item, DefinitionError) and item.unreadable:
            return FileReport(path=label, problem=item.message, unreadable=True)
    if not result.items:
        return FileReport(path=label, problem="no definitions found (the file is empty)")
    return FileReport(path=label, definitions=tuple(_definition_report(lb, item) for lb, item in result.items))


def _inside_directory(report: FileReport, file: Path) -> FileReport:
    """A file found in a directory that cannot even be opened is a partial result (exit 1), not a bad input."""
    if not report.unreadable:
        return report
    try:
        with open(file, "rb"):
            return report
    except OSError:
        return FileReport(path=report.path, problem=report.problem, partial=True)


def check_files(paths: Iterable[str | Path]) -> ValidationReport:
    """Validate files and directories (every *.yaml, *.yml and *.json below them), in the order given."""
    if isinstance(paths, (str, bytes, Path)) or not isinstance(paths, Iterable):
        raise ArgumentTypeError("the paths", "an iterable of paths (a list of str or Path)", paths)
    reports: list[FileReport] = []
    for path in paths:
        if not isinstance(path, (str, Path)):
            raise ArgumentTypeError("each path", "a str or a Path", path)
        as_path = Path(path)
        if str(path) != "-" and is_directory(as_path):
            files = list(iter_files(as_path))
            hidden = [
                FileReport(path=where, problem=f"cannot be read: {why} (a directory: not searched)", partial=True)
                for where, why in unreadable_directories(as_path)
            ]
            if not files and not hidden:
                reports.append(FileReport(path=str(path), problem="no *.yaml, *.yml or *.json files in the directory"))
            reports += hidden
            reports += [_inside_directory(check_file(file), file) for file in files]
        else:
            reports.append(check_file(path))
    return ValidationReport(files=tuple(reports))
