// Command kai-oracle runs KAI Scheduler's own pod-grouper code over the cases of one tests/fixtures/kai file and
// prints, per case, the PodGroups KAI creates and the pods as KAI labels them (JSON). compare.py turns that into
// the fixtures' expect shape with tests/kai_facts.py and diffs it. It is run by hand, never in CI: see README.md.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/kai-scheduler/KAI-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgroup"
	"github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/cronjobs"
	"github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/defaultgrouper"
	"github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/deployment"
	"github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/grouper"
	"github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/grove"
	"github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/job"
	jobsetplugin "github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/jobset"
	"github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/knative"
	"github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/kubeflow"
	jaxplugin "github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/kubeflow/jax"
	"github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/kubeflow/mpi"
	notebookplugin "github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/kubeflow/notebook"
	pytorchplugin "github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/kubeflow/pytorch"
	tensorflowplugin "github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/kubeflow/tensorflow"
	xgboostplugin "github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/kubeflow/xgboost"
	lwsplugin "github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/leaderworkerset"
	"github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/podjob"
	"github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/ray"
	"github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/skiptopowner"
	"github.com/kai-scheduler/KAI-scheduler/pkg/podgrouper/podgrouper/plugins/spark"
)

type fixture struct {
	Cases []struct {
		Name    string                   `json:"name"`
		Object  map[string]interface{}   `json:"object"`
		Related []map[string]interface{} `json:"related"`
		Pods    []map[string]interface{} `json:"pods"`
	} `json:"cases"`
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func main() {
	raw, err := os.ReadFile(os.Args[1])
	must(err)
	var f fixture
	js, err := yaml.YAMLToJSON(raw)
	must(err)
	// decode numbers as the API machinery does (int64, not float64)
	must(json.Unmarshal(js, &f))
	for i := range f.Cases {
		f.Cases[i].Object = fixNumbers(f.Cases[i].Object).(map[string]interface{})
		for j := range f.Cases[i].Related {
			f.Cases[i].Related[j] = fixNumbers(f.Cases[i].Related[j]).(map[string]interface{})
		}
		for j := range f.Cases[i].Pods {
			f.Cases[i].Pods[j] = fixNumbers(f.Cases[i].Pods[j]).(map[string]interface{})
		}
	}
	out := map[string]interface{}{}
	for _, c := range f.Cases {
		// a fresh scheme per case: the fake client registers the kinds it meets
		scheme := runtime.NewScheme()
		must(v1.AddToScheme(scheme))
		must(v2alpha2.AddToScheme(scheme))
		var objs []client.Object
		seen := map[string]bool{}
		add := func(m map[string]interface{}) {
			u := &unstructured.Unstructured{Object: m}
			key := u.GetKind() + "/" + u.GetName()
			if seen[key] {
				return
			}
			seen[key] = true
			if u.GetKind() == "Pod" {
				p := &v1.Pod{}
				must(runtime.DefaultUnstructuredConverter.FromUnstructured(m, p))
				objs = append(objs, p)
				return
			}
			objs = append(objs, u.DeepCopy())
		}
		for _, p := range c.Pods {
			add(p)
		}
		add(c.Object)
		for _, r := range c.Related {
			add(r)
		}
		kc := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
		hub := newHub(kc)
		grouper := podgrouper.NewPodgrouper(kc, kc, hub)
		handler := podgroup.NewHandler(kc, "kai.scheduler/node-pool", "kai.scheduler/queue")
		ctx := context.Background()
		errs := map[string]string{}
		for pass := 0; pass < 2; pass++ {
			for _, pm := range c.Pods {
				md := pm["metadata"].(map[string]interface{})
				pod := &v1.Pod{}
				must(kc.Get(ctx, types.NamespacedName{Namespace: md["namespace"].(string), Name: md["name"].(string)}, pod))
				// controller-runtime's cache reader sets the kind on what it returns; the fake client does not
				pod.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
				top, owners, err := grouper.GetPodOwners(ctx, pod)
				if err != nil {
					errs[pod.Name] = "owners: " + err.Error()
					continue
				}
				meta, err := grouper.GetPGMetadata(ctx, pod, top, owners)
				if err != nil {
					errs[pod.Name] = "metadata: " + err.Error()
					continue
				}
				delete(errs, pod.Name)
				must(handler.ApplyToCluster(ctx, *meta))
				if pod.Annotations == nil {
					pod.Annotations = map[string]string{}
				}
				if pod.Labels == nil {
					pod.Labels = map[string]string{}
				}
				pod.Annotations["pod-group-name"] = meta.Name
				delete(pod.Labels, "kai.scheduler/subgroup-name")
				if sg := meta.FindSubGroupForPod(pod.Namespace, pod.Name); sg != nil {
					pod.Labels["kai.scheduler/subgroup-name"] = sg.Name
				}
				must(kc.Update(ctx, pod))
			}
		}
		var manifests []interface{}
		pgs := &v2alpha2.PodGroupList{}
		must(kc.List(ctx, pgs))
		for _, pg := range pgs.Items {
			manifests = append(manifests, map[string]interface{}{"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
				"metadata": map[string]interface{}{"name": pg.Name}, "spec": pg.Spec})
		}
		for _, pm := range c.Pods {
			md := pm["metadata"].(map[string]interface{})
			pod := &v1.Pod{}
			must(kc.Get(ctx, types.NamespacedName{Namespace: md["namespace"].(string), Name: md["name"].(string)}, pod))
			if _, failed := errs[pod.Name]; failed {
				pod.Annotations = nil
			}
			manifests = append(manifests, map[string]interface{}{"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]interface{}{"name": pod.Name, "annotations": pod.Annotations, "labels": pod.Labels}})
		}
		out[c.Name] = map[string]interface{}{"manifests": manifests, "errors": errs}
	}
	b, err := json.MarshalIndent(out, "", " ")
	must(err)
	fmt.Println(string(b))
}

// hub maps top-owner kinds to KAI's groupers as pkg/podgrouper/podgrouper/hub/hub.go NewDefaultPluginsHub does
// (defaults: search-legacy-pg and knative-gang-schedule true), limited to the kinds of our fixtures.
type hub struct {
	table map[metav1.GroupVersionKind]grouper.Grouper
	def   grouper.Grouper
}

func (h *hub) GetPodGrouperPlugin(gvk metav1.GroupVersionKind) grouper.Grouper {
	if g, ok := h.table[gvk]; ok {
		return g
	}
	gvk.Version = "*"
	if g, ok := h.table[gvk]; ok {
		return g
	}
	return h.def
}

func newHub(kc client.Client) *hub {
	dg := defaultgrouper.NewDefaultGrouper("kai.scheduler/queue", "kai.scheduler/node-pool", kc)
	kd := kubeflow.NewKubeflowDistributedGrouper(dg)
	mg := mpi.NewMpiGrouper(kc, kd)
	rg := ray.NewRayGrouper(kc, dg)
	gg := grove.NewGroveGrouper(kc, dg)
	t := map[metav1.GroupVersionKind]grouper.Grouper{
		{Group: "apps", Version: "v1", Kind: "Deployment"}:                          deployment.NewDeploymentGrouper(dg),
		{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"}:                  pytorchplugin.NewPyTorchGrouper(kd),
		{Group: "kubeflow.org", Version: "v1", Kind: "TFJob"}:                       tensorflowplugin.NewTensorFlowGrouper(kd),
		{Group: "kubeflow.org", Version: "v1", Kind: "XGBoostJob"}:                  xgboostplugin.NewXGBoostGrouper(kd),
		{Group: "kubeflow.org", Version: "v1", Kind: "JAXJob"}:                      jaxplugin.NewJaxGrouper(kd),
		{Group: "kubeflow.org", Version: "v1beta1", Kind: "Notebook"}:               notebookplugin.NewNotebookGrouper(dg),
		{Group: "kubeflow.org", Version: "v1", Kind: "MPIJob"}:                      mg,
		{Group: "kubeflow.org", Version: "v2beta1", Kind: "MPIJob"}:                 mg,
		{Group: "batch", Version: "v1", Kind: "Job"}:                                job.NewK8sJobGrouper(kc, dg, true),
		{Group: "apps", Version: "v1", Kind: "StatefulSet"}:                         dg,
		{Group: "apps", Version: "v1", Kind: "ReplicaSet"}:                          dg,
		{Group: "", Version: "v1", Kind: "Pod"}:                                     podjob.NewPodJobGrouper(dg, spark.NewSparkGrouper(dg)),
		{Group: "serving.knative.dev", Version: "v1", Kind: "Service"}:              knative.NewKnativeGrouper(kc, dg, true),
		{Group: "batch", Version: "v1", Kind: "CronJob"}:                            cronjobs.NewCronJobGrouper(kc, dg),
		{Group: "ray.io", Version: "v1", Kind: "RayCluster"}:                        ray.NewRayClusterGrouper(rg),
		{Group: "ray.io", Version: "v1", Kind: "RayJob"}:                            ray.NewRayJobGrouper(rg),
		{Group: "ray.io", Version: "v1", Kind: "RayService"}:                        ray.NewRayServiceGrouper(rg),
		{Group: "leaderworkerset.x-k8s.io", Version: "v1", Kind: "LeaderWorkerSet"}: lwsplugin.NewLwsGrouper(dg),
		{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"}:             jobsetplugin.NewJobSetGrouper(kc, dg),
		{Group: "grove.io", Version: "v1alpha1", Kind: "PodCliqueSet"}:              gg,
	}
	t[metav1.GroupVersionKind{Group: "nvidia.com", Version: "*", Kind: "DynamoGraphDeployment"}] =
		skiptopowner.NewSkipTopOwnerGrouper(kc, dg, t)
	return &hub{table: t, def: dg}
}

func fixNumbers(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		for k, x := range t {
			t[k] = fixNumbers(x)
		}
		return t
	case []interface{}:
		for i, x := range t {
			t[i] = fixNumbers(x)
		}
		return t
	case float64:
		if t == float64(int64(t)) {
			return int64(t)
		}
		return t
	}
	return v
}
