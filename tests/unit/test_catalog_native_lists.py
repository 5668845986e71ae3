"""Every kind KAI Scheduler groups natively and every kind Kueue integrates (issue 25's goal) is accounted for:
the built-in catalog defines it, reads it through the registry's version fallback (and the fallback is tested on
the definition's own fixture), or docs/catalog.md names it in its "not covered" section with the reason.

The lists are copied from the sources, so a new entry upstream is added here by hand (with the commit it came from):
- KAI Scheduler d5bc503a146317e51037d89775d77172c6d12f71, pkg/podgrouper/podgrouper/hub/hub.go (the GVK table of
  NewDefaultPluginsHub, `*` where KAI matches every version).
- Kueue ff69552e79ad21652c36caa97038382e55625cf7, pkg/controller/jobs/*/*_controller.go (each integration's `gvk`,
  registered by pkg/controller/jobs/jobs.go), and the frameworks site/content/en/docs/tasks/run/external_workloads/
  runs through those integrations.
"""

from __future__ import annotations

import copy
import re
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import yaml

from workload_map.catalog import builtin_registry
from workload_map.resolve import resolve

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "catalog"
NOT_COVERED = "### Not covered: kinds on KAI's and Kueue's native lists without a definition"
FALLBACK = "### Versions on KAI's list read through the version fallback"
ANY_VERSION = "*"


class NativeKind(NamedTuple):
    group: str
    version: str
    kind: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


KAI_HUB = (
    NativeKind("apps", "v1", "Deployment"),
    NativeKind("machinelearning.seldon.io", "v1alpha2", "SeldonDeployment"),
    NativeKind("machinelearning.seldon.io", "v1", "SeldonDeployment"),
    NativeKind("kubevirt.io", "v1", "VirtualMachineInstance"),
    NativeKind("kubeflow.org", "v1", "TFJob"),
    NativeKind("kubeflow.org", "v1", "PyTorchJob"),
    NativeKind("kubeflow.org", "v1", "XGBoostJob"),
    NativeKind("kubeflow.org", "v1", "JAXJob"),
    NativeKind("kubeflow.org", "v1", "MPIJob"),
    NativeKind("kubeflow.org", "v2beta1", "MPIJob"),
    NativeKind("kubeflow.org", "v1beta1", "Notebook"),
    NativeKind("batch", "v1", "Job"),
    NativeKind("apps", "v1", "StatefulSet"),
    NativeKind("apps", "v1", "ReplicaSet"),
    NativeKind("run.ai", "v1", "RunaiJob"),
    NativeKind("", "v1", "Pod"),
    NativeKind("amlarc.azureml.com", "v1alpha1", "AmlJob"),
    NativeKind("serving.knative.dev", "v1", "Service"),
    NativeKind("batch", "v1", "CronJob"),
    NativeKind("workspace.devfile.io", "v1alpha2", "DevWorkspace"),
    NativeKind("ray.io", "v1alpha1", "RayCluster"),
    NativeKind("ray.io", "v1alpha1", "RayJob"),
    NativeKind("ray.io", "v1alpha1", "RayService"),
    NativeKind("ray.io", "v1", "RayCluster"),
    NativeKind("ray.io", "v1", "RayJob"),
    NativeKind("ray.io", "v1", "RayService"),
    NativeKind("kubeflow.org", "v1alpha1", "ScheduledWorkflow"),
    NativeKind("tekton.dev", "v1", "PipelineRun"),
    NativeKind("tekton.dev", "v1", "TaskRun"),
    NativeKind("egx.nvidia.io", "v1", "SPOTRequest"),
    NativeKind("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet"),
    NativeKind("jobset.x-k8s.io", "v1alpha2", "JobSet"),
    NativeKind("grove.io", "v1alpha1", "PodGangSet"),
    NativeKind("grove.io", "v1alpha1", "PodCliqueSet"),
    NativeKind("argoproj.io", "v1alpha1", "Workflow"),
    NativeKind("run.ai", ANY_VERSION, "InferenceWorkload"),
    NativeKind("run.ai", ANY_VERSION, "TrainingWorkload"),
    NativeKind("run.ai", ANY_VERSION, "DistributedWorkload"),
    NativeKind("run.ai", ANY_VERSION, "InteractiveWorkload"),
    NativeKind("run.ai", ANY_VERSION, "DistributedInferenceWorkload"),
    NativeKind("trainer.kubeflow.org", "v1alpha1", "TrainJob"),
    NativeKind("nvidia.com", ANY_VERSION, "DynamoGraphDeployment"),
)

KUEUE_INTEGRATIONS = (
    NativeKind("workload.codeflare.dev", "v1beta2", "AppWrapper"),
    NativeKind("apps", "v1", "Deployment"),
    NativeKind("batch", "v1", "Job"),
    NativeKind("jobset.x-k8s.io", "v1alpha2", "JobSet"),
    NativeKind("kubeflow.org", "v1", "JAXJob"),
    NativeKind("kubeflow.org", "v1", "PaddleJob"),
    NativeKind("kubeflow.org", "v1", "PyTorchJob"),
    NativeKind("kubeflow.org", "v1", "TFJob"),
    NativeKind("kubeflow.org", "v1", "XGBoostJob"),
    NativeKind("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet"),
    NativeKind("kubeflow.org", "v2beta1", "MPIJob"),
    NativeKind("", "v1", "Pod"),
    NativeKind("ray.io", "v1", "RayCluster"),
    NativeKind("ray.io", "v1", "RayJob"),
    NativeKind("ray.io", "v1", "RayService"),
    NativeKind("sparkoperator.k8s.io", "v1beta2", "SparkApplication"),
    NativeKind("apps", "v1", "StatefulSet"),
    NativeKind("trainer.kubeflow.org", "v1alpha1", "TrainJob"),
)

# site/content/en/docs/tasks/run/external_workloads/*.md and run_cronjobs.md: run through the integrations above.
KUEUE_DOCUMENTED_FRAMEWORKS = (
    NativeKind("batch", "v1", "CronJob"),
    NativeKind("flux-framework.org", "v1alpha1", "MiniCluster"),
    NativeKind("argoproj.io", "v1alpha1", "Workflow"),
    NativeKind("tekton.dev", "v1", "PipelineRun"),
    NativeKind("tekton.dev", "v1", "TaskRun"),
    NativeKind("agents.x-k8s.io", "v1alpha1", "Sandbox"),
)

NATIVE_KINDS = tuple(dict.fromkeys(KAI_HUB + KUEUE_INTEGRATIONS + KUEUE_DOCUMENTED_FRAMEWORKS))


def _ids(kinds: tuple[NativeKind, ...]) -> list[str]:
    return [f"{kind.api_version}/{kind.kind}" for kind in kinds]


@cache
def _section(heading: str) -> str:
    text = (ROOT / "docs" / "catalog.md").read_text(encoding="utf-8")
    assert text.count(heading + "\n") == 1, heading
    return text.split(heading + "\n", 1)[1].split("\n#", 1)[0]


def _bullets(heading: str) -> list[str]:
    """The section's list items, each joined onto one line."""
    return [" ".join(item.split()) for item in re.split(r"\n- ", "\n" + _section(heading))[1:]]


def _named_in(heading: str, kind: NativeKind) -> bool:
    """A list item of the section names the kind in its head, the parentheses after its bold title:
    `- **Title** (`group/version` Kind, Kind; `group/version` Kind): why`."""
    for item in _bullets(heading):
        head = re.match(r"\*\*[^*]+\*\* \(([^)]*)\)", item)
        for part in head.group(1).split(";") if head else ():
            named = re.match(r"\s*`([^`]+)` (.*)", part)
            names = [word.strip() for word in named.group(2).split(",")] if named else []
            if named and named.group(1) == kind.api_version and kind.kind in names:
                return True
    return False


def _resolved(kind: NativeKind) -> tuple[str, bool] | None:
    """The built-in definition chosen for the kind (its name, whether it was written for that version)."""
    version = "v0" if kind.version == ANY_VERSION else kind.version  # a version no definition is written for
    chosen = builtin_registry().for_gvk(kind.group, version, kind.kind)
    return None if chosen is None else (chosen.karta.name, chosen.exact)


def test_the_lists_hold_the_kinds_issue_25_counts() -> None:
    assert len(KAI_HUB) == 42
    assert len(KUEUE_INTEGRATIONS) == 18
    assert len(NATIVE_KINDS) == 47  # "about 45 types in all"


@pytest.mark.parametrize("kind", NATIVE_KINDS, ids=_ids(NATIVE_KINDS))
def test_every_native_kind_is_defined_or_named_as_not_covered(kind: NativeKind) -> None:
    resolved = _resolved(kind)
    listed = _named_in(NOT_COVERED, kind)
    assert (resolved is not None) != listed, f"{kind.api_version} {kind.kind}: " + (
        f"defined ({resolved[0]}) and also named as not covered" if resolved else "neither defined nor named"
    )


FALLBACKS = tuple(kind for kind in NATIVE_KINDS if (found := _resolved(kind)) is not None and not found[1])


def test_the_fallback_kinds_are_the_ones_the_docs_name() -> None:
    assert _ids(FALLBACKS) == [
        "machinelearning.seldon.io/v1alpha2/SeldonDeployment",
        "kubeflow.org/v1beta1/Notebook",
        "ray.io/v1alpha1/RayCluster",
        "ray.io/v1alpha1/RayJob",
        "ray.io/v1alpha1/RayService",
        "kubeflow.org/v1alpha1/ScheduledWorkflow",
        "nvidia.com/*/DynamoGraphDeployment",
        "flux-framework.org/v1alpha1/MiniCluster",
    ]
    for kind in FALLBACKS:
        assert _named_in(FALLBACK, kind), f"{kind.api_version} {kind.kind} is not in {FALLBACK!r}"


FIXED_VERSION_FALLBACKS = tuple(kind for kind in FALLBACKS if kind.version != ANY_VERSION)


@pytest.mark.parametrize("kind", FIXED_VERSION_FALLBACKS, ids=_ids(FIXED_VERSION_FALLBACKS))
def test_the_version_fallback_reads_the_kais_version_of_the_definitions_fixture(kind: NativeKind) -> None:
    found = _resolved(kind)
    assert found is not None
    definition = found[0]
    written = yaml.safe_load((FIXTURES / definition / "workload.yaml").read_text(encoding="utf-8"))
    relabelled: dict[str, Any] = copy.deepcopy(written)
    relabelled["apiVersion"] = kind.api_version
    chosen = builtin_registry().for_object(relabelled)
    assert chosen is not None and chosen.karta.name == definition and not chosen.exact
    resolution = resolve(chosen.karta, relabelled)
    assert resolution.errors == ()
    expected = resolve(chosen.karta, written).to_dict()
    got = resolution.to_dict()
    assert got.pop("object")["apiVersion"] == kind.api_version
    expected.pop("object")
    assert got == expected
    assert any(c["hasPodDefinition"] and c["instances"] for c in expected["components"]), "no pods in the fixture"


def test_every_version_of_a_kind_kai_matches_by_wildcard_resolves() -> None:
    defined = {
        entry.gvk.version for entry in builtin_registry().by_kind("DynamoGraphDeployment") if entry.gvk is not None
    }
    assert defined == {"v1alpha1", "v1beta1"}
    assert _resolved(NativeKind("nvidia.com", "v1", "DynamoGraphDeployment")) == (
        "nvidia-com-dynamographdeployment-v1beta1",
        False,
    )


def test_the_check_fails_for_a_kind_nobody_accounts_for() -> None:
    unknown = NativeKind("example.com", "v1", "WidgetJob")
    assert _resolved(unknown) is None
    assert not _named_in(NOT_COVERED, unknown)
    # a kind named without its API version does not count either
    assert not _named_in(NOT_COVERED, NativeKind("run.ai", "v2", "RunaiJob"))
