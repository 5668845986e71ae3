"""`wmap` side by side with upstream's `kli` on the same manifests, and whether the two agree on what they read.

Rows (times are medians of interleaved rounds, in ms; the baseline is ``python -c pass`` measured in the same run):

* ``--version``, and ``describe -f <manifest> -o json`` for examples/pytorchjob.yaml, examples/jobset.yaml and the
  conformance Deployment with GPU limits: one row for wmap and one for kli against ``python -c pass``, and one row
  ``wmap / kli`` whose baseline is kli's time (a ratio under 1 means wmap is faster);
* every single-workload conformance manifest described once per round, the medians summed, for both tools;
* agreement, one row per manifest (the examples and the conformance manifests): ``figure`` is 1 when both report
  the same GPU total (``resources.gpus``) and the same desired replicas per top-level component (and so the same
  sum), 0 otherwise with a ``note`` naming the difference. Each tool's first run of a manifest is the one compared.

kli is not built here: it is found as ``$KLI`` (a path to the binary), else in the cache directory where
``scripts/build-kli.sh`` installs it (``${WMAP_CACHE_DIR:-~/.cache/workload-map}/kli-<version>/kli``), for the
version that script resolves. ``WMAP_BENCH_BUILD_KLI=1`` lets this benchmark run the build (minutes). Without kli,
the kli, ratio and agreement rows have ``figure: None`` and a ``note`` saying why; the wmap rows are still measured.

Both tools run offline: ``KUBECONFIG=/nonexistent``, ``HOME`` and ``XDG_CONFIG_HOME`` in a fresh temporary
directory, no ``WMAP_OUTPUT``/``WMAP_CONFIG``.

Run alone: ``python benchmarks/bench_kli.py``.
"""

from __future__ import annotations

import functools
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import _common
from _common import REPO, python_pass, round_robin, wmap_executable

BUILD_SCRIPT = REPO / "scripts" / "build-kli.sh"
CONFORMANCE = REPO.parent / "shared" / "conformance" / "manifests"
ROUNDS = 5
SUM_ROUNDS = 3
TIMED = ["examples/pytorchjob.yaml", "examples/jobset.yaml", "conformance/deployment__gpu-limits.yaml"]


# plain classes, not dataclasses: benchmarks/run.py loads this file without registering it in sys.modules
class Kli:
    def __init__(self, path: str | None, version: str | None, note: str | None) -> None:
        self.path, self.version, self.note = path, version, note


class Run:
    def __init__(self) -> None:
        self.seconds: list[float] = []
        self.first_stdout: str | None = None
        self.error: str | None = None

    @property
    def median(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds and self.error is None else None


def _env(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WMAP_OUTPUT", "WMAP_CONFIG", "KUBECONFIG")}
    env.update(KUBECONFIG="/nonexistent", HOME=home, XDG_CONFIG_HOME=str(Path(home) / ".config"))
    return env


def _one_line(text: str) -> str:
    return " ".join(text.split())[:400]


def _find_kli() -> Kli:
    explicit = os.environ.get("KLI")
    if explicit:
        return (
            Kli(explicit, None, None)
            if os.access(explicit, os.X_OK)
            else Kli(None, None, f"$KLI={explicit} is not an executable")
        )
    build = os.environ.get("WMAP_BENCH_BUILD_KLI") == "1"
    command = ["bash", str(BUILD_SCRIPT)] + ([] if build else ["--resolve-only"])
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800 if build else 120, check=False)
    except subprocess.TimeoutExpired:
        return Kli(None, None, f"{BUILD_SCRIPT.name} did not finish in time")
    stderr = _one_line(done.stderr.replace("build-kli: ", ""))
    if done.returncode != 0:
        return Kli(None, None, stderr or f"{BUILD_SCRIPT.name} exited {done.returncode}")
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if build:
        return Kli(last, None, None)
    _module, _, version = last.partition(" ")
    cache = Path(os.environ.get("WMAP_CACHE_DIR") or Path.home() / ".cache" / "workload-map")
    binary = cache / f"kli-{version}" / "kli"
    if os.access(binary, os.X_OK):
        return Kli(str(binary), version, None)
    return Kli(None, version, f"kli {version} is served but not built: run scripts/build-kli.sh")


def _manifests() -> dict[str, Path]:
    found = {f"examples/{p.name}": p for p in sorted((REPO / "examples").glob("*.yaml"))}
    if CONFORMANCE.is_dir():
        found.update({f"conformance/{p.name}": p for p in sorted(CONFORMANCE.glob("*.yaml"))})
    return found


def _time(run: Run, command: list[str], env: dict[str, str]) -> None:
    if run.error is not None:
        return
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        run.error = f"exit {done.returncode}: {_one_line(done.stderr) or _one_line(done.stdout)}"
        return
    if run.first_stdout is None:
        run.first_stdout = done.stdout
    run.seconds.append(elapsed)


def _measure(commands: dict[str, list[str]], rounds: int, env: dict[str, str]) -> dict[str, Run]:
    runs = {name: Run() for name in commands}
    # interleaved, so load on a shared machine hits every command alike
    round_robin(
        {name: functools.partial(_time, runs[name], command, env) for name, command in commands.items()}, rounds
    )
    return runs


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


def _row(
    name: str, figure: float | None, baseline: float | None, target: float | None, note: str | None
) -> dict[str, Any]:
    return _common.row(name, _ms(figure), _ms(baseline), target, "ms", digits=1, note=note)


def _summary(view: Any) -> tuple[Any, dict[str, Any]]:
    """GPU total and desired replicas per top-level component (name -> desired; repeated names are summed)."""
    if isinstance(view, dict) and view.get("kind") == "WorkloadViewList" and len(view.get("items") or []) == 1:
        view = view["items"][0]  # wmap's envelope for a stream (here: a workload after a skipped PVC)
    if not isinstance(view, dict) or "resources" not in view:
        raise ValueError("expected one workload view")
    gpus = (view.get("resources") or {}).get("gpus")
    replicas: dict[str, Any] = {}
    for component in view.get("components") or []:
        desired = (component.get("replicas") or {}).get("desired")
        name = str(component.get("name"))
        replicas[name] = desired if name not in replicas else (replicas[name] or 0) + (desired or 0)
    return gpus, replicas


def _agreement(label: str, ours: Run, theirs: Run | None, kli_note: str | None) -> dict[str, Any]:
    name = f"agreement on {label}: same GPU total and desired replicas per component (1 = yes)"
    row = _common.row(name, None, None, 1, "bool")
    if theirs is None:  # no kli: say what wmap reports, so the row can be checked by hand
        try:
            gpus, replicas = _summary(json.loads(ours.first_stdout or ""))
            mine = f"wmap reports gpus={gpus} replicas={replicas}"
        except ValueError:
            mine = f"wmap {ours.error}" if ours.error else "wmap's output is not one view"
        row["note"] = f"{kli_note}; {mine}"
        return row
    if ours.error or theirs.error:
        both = [f"wmap {ours.error}" if ours.error else "", f"kli {theirs.error}" if theirs.error else ""]
        row["note"] = "; ".join(part for part in both if part)
        # both refusing the same input is agreement; only one refusing is not
        row["figure"] = 1 if ours.error and theirs.error else 0
        return row
    try:
        ours_gpus, ours_replicas = _summary(json.loads(ours.first_stdout or ""))
        kli_gpus, kli_replicas = _summary(json.loads(theirs.first_stdout or ""))
    except ValueError as exc:
        row["note"] = f"output not comparable: {exc}"
        return row
    differences = []
    if ours_gpus != kli_gpus:
        differences.append(f"gpus wmap={ours_gpus} kli={kli_gpus}")
    if ours_replicas != kli_replicas:
        differences.append(f"replicas wmap={ours_replicas} kli={kli_replicas}")
    row["figure"] = 0 if differences else 1
    row["note"] = "; ".join(differences) or f"gpus={ours_gpus} replicas={ours_replicas}"
    return row


def rows() -> list[dict[str, Any]]:
    kli = _find_kli()
    wmap = wmap_executable()
    manifests = _manifests()
    timed = [label for label in TIMED if label in manifests]
    with tempfile.TemporaryDirectory(prefix="wmap-bench-kli-") as home:
        env = _env(home)
        commands: dict[str, list[str]] = {"pass": python_pass(), "wmap --version": [wmap, "--version"]}
        if kli.path:
            commands["kli --version"] = [kli.path, "--version"]
        for label in timed:
            commands[f"wmap {label}"] = [wmap, "describe", "-f", str(manifests[label]), "-o", "json"]
            if kli.path:
                commands[f"kli {label}"] = [kli.path, "describe", "-f", str(manifests[label]), "-o", "json"]
        runs = _measure(commands, ROUNDS, env)

        if kli.path and kli.version is None and runs["kli --version"].first_stdout:
            kli.version = runs["kli --version"].first_stdout.strip()
        rest = {label: path for label, path in manifests.items() if label not in timed}
        once: dict[str, list[str]] = {}
        for label, path in rest.items():
            once[f"wmap {label}"] = [wmap, "describe", "-f", str(path), "-o", "json"]
            if kli.path:
                once[f"kli {label}"] = [kli.path, "describe", "-f", str(path), "-o", "json"]
        runs.update(_measure(once, 1, env))
        # the conformance set, summed: only the manifests both tools describe (with kli), all wmap describes otherwise
        conformance = [label for label in manifests if label.startswith("conformance/")]
        tools = ["wmap", "kli"] if kli.path else ["wmap"]
        summed = [label for label in conformance if all(runs[f"{tool} {label}"].error is None for tool in tools)]
        extra: dict[str, list[str]] = {}
        for label in summed:
            if label in timed:
                continue
            extra[f"wmap {label}"] = once[f"wmap {label}"]
            if kli.path:
                extra[f"kli {label}"] = once[f"kli {label}"]
        for name, run in _measure(extra, SUM_ROUNDS - 1, env).items():
            runs[name].seconds.extend(run.seconds)
            runs[name].error = runs[name].error or run.error
        # a manifest that failed in a later round leaves the sum too (it is named in its agreement row)
        summed = [label for label in summed if all(runs[f"{tool} {label}"].error is None for tool in tools)]

    pass_s = runs["pass"].median
    missing = None if kli.path else (kli.note or "kli not found")
    tag = f"kli {kli.version}" if kli.version else "kli"
    out: list[dict[str, Any]] = []

    def trio(what: str, ours: Run, theirs: Run | None, target: float | None) -> None:
        ours_s, kli_s = ours.median, theirs.median if theirs else None
        kli_note = missing or (theirs.error if theirs else None)
        out.append(_row(f"wmap {what} (vs python -c pass)", ours_s, pass_s, target, ours.error))
        out.append(_row(f"{tag} {what} (vs python -c pass)", kli_s, pass_s, None, kli_note))
        out.append(
            _row(f"wmap / {tag}: {what} (baseline: kli's time)", ours_s if kli_s else None, kli_s, None, kli_note)
        )

    trio("--version", runs["wmap --version"], runs.get("kli --version"), 6)
    for label in timed:
        trio(f"describe -f {label} -o json", runs[f"wmap {label}"], runs.get(f"kli {label}"), 15)

    def total(prefix: str) -> float | None:
        medians = [runs[f"{prefix} {label}"].median for label in summed]
        return None if not medians or any(m is None for m in medians) else sum(m for m in medians if m is not None)

    what = f"describe -f of {len(summed)} conformance manifests, summed"
    ours_total, kli_total = total("wmap"), (total("kli") if kli.path else None)
    out.append(
        _row(f"wmap {what} (vs python -c pass x {len(summed)})", ours_total, (pass_s or 0) * len(summed), None, None)
    )
    out.append(
        _row(f"{tag} {what} (vs python -c pass x {len(summed)})", kli_total, (pass_s or 0) * len(summed), None, missing)
    )
    out.append(
        _row(
            f"wmap / {tag}: {what} (baseline: kli's time)", ours_total if kli_total else None, kli_total, None, missing
        )
    )

    for label in manifests:
        out.append(_agreement(label, runs[f"wmap {label}"], runs.get(f"kli {label}"), missing))
    return out


if __name__ == "__main__":
    for row in rows():
        print(row)
