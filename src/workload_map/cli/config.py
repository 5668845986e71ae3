"""The config file: default output formats (globally or per command) and the jq mode.

Which file: `--config PATH`, else `$WMAP_CONFIG`, else `$XDG_CONFIG_HOME/wmap/config.yaml` (`~/.config/wmap/
config.yaml` when `XDG_CONFIG_HOME` is unset). A missing default file is ignored; a missing file named by
`--config` or `$WMAP_CONFIG` is an error.

The content is strict YAML, one mapping:

    output: json            # every command with -o (that can print json)
    describe:
      output: tree          # only `wmap describe`
    definitions:
      output: yaml
    jq-mode: auto           # where definitions' jq expressions run (--jq-mode): auto, inprocess, worker
    jq-deadline: 10         # seconds one evaluation may run in the jq worker (--jq-deadline)

The top-level keys are `output`, `jq-mode`, `jq-deadline` and the command names; a command's section takes
`output`. Any other key, a value of the wrong type, or an unknown format is an error (exit 2), so a typo never
silently does nothing.

Precedence of an output format: the `-o` flag, then `$WMAP_OUTPUT`, then the command's section, then the global
`output`, then the command's default.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

import msgspec

from workload_map.cli.errors import UsageError

ENV_CONFIG = "WMAP_CONFIG"
ENV_OUTPUT = "WMAP_OUTPUT"

GLOBAL_KEYS: tuple[str, ...] = ("output", "jq-mode", "jq-deadline")
JQ_MODES: tuple[str, ...] = ("auto", "inprocess", "worker")  # --jq-mode (workload_map.cli.jqmode)
SECTION_KEYS: tuple[str, ...] = ("output",)
# Every format some command prints; which ones a command takes is checked when it runs (options.OutputSpec).
KNOWN_FORMATS: tuple[str, ...] = ("tree", "table", "wide", "json", "yaml")


class Config(msgspec.Struct, frozen=True):
    """A parsed config file (`path` is None when no file was read)."""

    path: str | None = None
    output: str | None = None
    sections: Mapping[str, Mapping[str, Any]] = msgspec.field(default_factory=dict)
    jq_mode: str | None = None
    jq_deadline: float | None = None

    def output_for(self, command: str) -> tuple[str, str] | None:
        """The configured output of `command` and where it was set (for messages), or None."""
        section = self.sections.get(command, {})
        value = section.get("output")
        if isinstance(value, str):
            return value, f"{self.path}: {command}.output"
        if self.output is not None:
            return self.output, f"{self.path}: output"
        return None


# Paths here are strings (os.path), not pathlib: every start asks where the config file is, and importing pathlib
# (with urllib.parse and ipaddress) costs ~2.5 ms (issue 19, start-up).
def default_path() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "wmap", "config.yaml")


def config_location(explicit: str | None = None) -> tuple[str, str]:
    """The config file that applies and what named it (`--config`, `$WMAP_CONFIG`; "" for the default path)."""
    if explicit:
        return explicit, "--config"
    if os.environ.get(ENV_CONFIG):
        return os.environ[ENV_CONFIG], f"${ENV_CONFIG}"
    return default_path(), ""


def load_config(explicit: str | None = None) -> Config:
    """Read the config file that applies (see the module docstring); an empty `Config` when there is none."""
    path, named_by = config_location(explicit)
    if not os.path.exists(path):
        if named_by:
            raise UsageError(
                f"config file {path} ({named_by}) does not exist",
                hint=f"create it, or leave out {named_by} to use {default_path()}",
            )
        return Config()
    return parse_config(path)


def parse_config(path: str) -> Config:
    """Parse and check one config file strictly."""
    # Imported here, not at the top: the YAML reader (workload_map.model, PyYAML) costs ~30 ms that `wmap --help`
    # and a run without a config file (the root group imports this module through cli.context) never need.
    from workload_map.model import DocumentError, read_documents

    label = str(path)
    try:
        documents = read_documents(path)
    except DocumentError as exc:
        raise UsageError(f"config file {exc}", hint="fix the file or point --config elsewhere") from None
    if not documents:
        return Config(path=label)
    if len(documents) > 1:
        raise UsageError(f"config file {label} holds {len(documents)} YAML documents; write one mapping")
    value = documents[0].value
    if not isinstance(value, Mapping):
        raise UsageError(f"config file {label} must be a mapping (key: value), not {type(value).__name__}")
    from workload_map.cli.command_table import COMMANDS  # only with a config file (issue 19: start-up)

    commands = list(COMMANDS)
    known = [*GLOBAL_KEYS, *commands]
    sections: dict[str, Mapping[str, Any]] = {}
    output: str | None = None
    jq: dict[str, Any] = {}
    for key, item in value.items():
        if key == "output":
            output = _format(label, "output", item)
        elif key == "jq-mode":
            jq["jq_mode"] = _jq_mode(label, item)
        elif key == "jq-deadline":
            jq["jq_deadline"] = _seconds(label, key, item)
        elif key in commands:
            if item is None:
                continue
            if not isinstance(item, Mapping):
                raise UsageError(f"config file {label}: {key} must be a mapping such as {{output: json}}")
            for sub in item:
                if sub not in SECTION_KEYS:
                    raise UsageError(
                        f"config file {label}: unknown key {key}.{sub}",
                        hint=f"a command's section takes: {', '.join(SECTION_KEYS)}",
                    )
            sections[str(key)] = {"output": _format(label, f"{key}.output", item.get("output"))}
        else:
            raise UsageError(
                f"config file {label}: unknown key {key!r}",
                hint=f"known keys: {', '.join(known)} (docs/cli.md, 'Configuration')",
            )
    return Config(path=label, output=output, sections=sections, **jq)


def _jq_mode(label: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value.lower() not in JQ_MODES:
        raise UsageError(f"config file {label}: jq-mode is {value!r}; use one of {', '.join(JQ_MODES)}")
    return value.lower()


MAX_SECONDS = 86400.0  # as cli.jqsettings.MAX_DEADLINE


def _seconds(label: str, key: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise UsageError(f"config file {label}: {key} is {value!r}; give a positive number of seconds")
    if value > MAX_SECONDS:  # more overflows the jq worker's timers
        raise UsageError(f"config file {label}: {key} is {value!r}; give at most {MAX_SECONDS:g} seconds (a day)")
    return float(value)


def _format(label: str, key: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value not in KNOWN_FORMATS:
        raise UsageError(f"config file {label}: {key} is {value!r}; use one of {', '.join(KNOWN_FORMATS)}")
    return value
