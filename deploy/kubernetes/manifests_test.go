package kubernetes_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
)

// manifests are the objects of every *.yaml file in this directory.
type manifests struct {
	configMaps []*corev1.ConfigMap
	jobs       []*batchv1.Job
}

// decodeManifests decodes every document of every *.yaml file here with
// the Kubernetes API types, strictly: a field the API does not have (a
// typo, a field at the wrong level) fails, as does a kind this test does
// not know, so a new kind of manifest cannot go unchecked.
func decodeManifests(t *testing.T, dir string) manifests {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s (%v)", dir, err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	var m manifests
	for _, file := range files {
		docs, err := splitYAML(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range docs {
			obj, _, err := decoder.Decode(doc, nil, nil)
			if err != nil {
				t.Fatalf("%s, document %d: %v", filepath.Base(file), i+1, err)
			}
			switch o := obj.(type) {
			case *corev1.ConfigMap:
				m.configMaps = append(m.configMaps, o)
			case *batchv1.Job:
				m.jobs = append(m.jobs, o)
			default:
				t.Fatalf("%s, document %d: a %T: teach this test what matters in it", filepath.Base(file), i+1, obj)
			}
		}
	}
	return m
}

// splitYAML returns the non-empty documents of a multi-document YAML file.
func splitYAML(file string) ([][]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := k8syaml.NewYAMLReader(bufio.NewReader(f))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			docs = append(docs, doc)
		}
	}
}

// stripComments drops whole-line comments, so a document of comments
// only counts as empty.
func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for line := range strings.Lines(string(doc)) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
		}
	}
	return b.Bytes()
}

// theJob returns the one Job and its one container, and the container's
// shell script (command sh -c, the script its only argument).
func theJob(t *testing.T, m manifests) (*batchv1.Job, *corev1.Container, string) {
	t.Helper()
	if len(m.jobs) != 1 {
		t.Fatalf("%d Jobs, want 1", len(m.jobs))
	}
	job := m.jobs[0]
	if n := len(job.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("job %s: %d containers, want 1", job.Name, n)
	}
	c := &job.Spec.Template.Spec.Containers[0]
	if strings.Join(c.Command, " ") != "/bin/sh -c" || len(c.Args) != 1 {
		t.Fatalf("container %s: command %q args %q, want /bin/sh -c and one script", c.Name, c.Command, c.Args)
	}
	return job, c, c.Args[0]
}

// orUnset prints an optional field's value, or "unset".
func orUnset[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

func env(c *corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

// TestManifests checks what a sharded run needs of the manifests, beyond
// their being valid objects: the Job is Indexed with every shard running
// at once, --shard's count is the Job's, the index comes from the
// completion index, the scenario file is the ConfigMap's key, the store's
// URL comes from a Secret only, a failed shard is not retried, and the
// pod asks for its resources.
func TestManifests(t *testing.T) {
	m := decodeManifests(t, ".")
	job, c, script := theJob(t, m)
	spec := job.Spec

	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode %s, want Indexed: the completion index is the shard", orUnset(spec.CompletionMode))
	}
	if spec.Completions == nil || spec.Parallelism == nil || *spec.Completions != *spec.Parallelism {
		t.Fatalf("completions %s, parallelism %s: want both, equal (every shard must be running at --start-at)", orUnset(spec.Completions), orUnset(spec.Parallelism))
	}
	shards := regexp.MustCompile(`--shard "\$JOB_COMPLETION_INDEX/([0-9]+)"`).FindAllStringSubmatch(script, -1)
	if len(shards) != 1 {
		t.Fatalf("the script has %d --shard \"$JOB_COMPLETION_INDEX/N\", want 1:\n%s", len(shards), script)
	}
	if n, _ := strconv.Atoi(shards[0][1]); int32(n) != *spec.Completions {
		t.Errorf("--shard's count %d, the Job's completions %d: they must agree", n, *spec.Completions)
	}
	if e := env(c, "JOB_COMPLETION_INDEX"); e == nil || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil ||
		e.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("JOB_COMPLETION_INDEX is %+v, want the completion index annotation by fieldRef", e)
	}

	checkScenarioMount(t, m, job, c, script)
	checkSecret(t, m, c, script)
	if e := env(c, "START_AT"); e == nil || e.Value != "@START_AT@" || !strings.Contains(script, `--start-at "$START_AT"`) {
		t.Errorf("START_AT is %+v: want the placeholder @START_AT@ that docs/scale.md's sed fills, given as --start-at", e)
	}

	pod := spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q, want Never: a shard restarted after --start-at cannot rejoin the run", pod.RestartPolicy)
	}
	if spec.BackoffLimit == nil || *spec.BackoffLimit != 0 {
		t.Errorf("backoffLimit %s, want 0: a retried shard starts after --start-at, which storebench refuses", orUnset(spec.BackoffLimit))
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, ok := c.Resources.Requests[r]
		if !ok || req.IsZero() {
			t.Errorf("container %s requests no %s: a shard needs its CPU to measure the store, not its neighbours", c.Name, r)
		}
		if lim, ok := c.Resources.Limits[r]; ok && lim.Cmp(req) < 0 {
			t.Errorf("container %s: %s limit %v below its request %v", c.Name, r, lim.String(), req.String())
		}
	}
}

// checkScenarioMount checks that the file storebench runs is the
// ConfigMap's scenario: the volume mounted where the path points names the
// ConfigMap, and the key it projects is one the ConfigMap has.
func checkScenarioMount(t *testing.T, m manifests, job *batchv1.Job, c *corev1.Container, script string) {
	t.Helper()
	run := regexp.MustCompile(`storebench run (\S+)`).FindStringSubmatch(script)
	if run == nil {
		t.Fatalf("no `storebench run FILE` in the script:\n%s", script)
	}
	file := run[1]
	var mount *corev1.VolumeMount
	for i, vm := range c.VolumeMounts {
		if filepath.Dir(file) == vm.MountPath {
			mount = &c.VolumeMounts[i]
		}
	}
	if mount == nil {
		t.Fatalf("no volume mounted at %s, where the scenario %s is read", filepath.Dir(file), file)
	}
	var vol *corev1.Volume
	for i, v := range job.Spec.Template.Spec.Volumes {
		if v.Name == mount.Name {
			vol = &job.Spec.Template.Spec.Volumes[i]
		}
	}
	if vol == nil || vol.ConfigMap == nil {
		t.Fatalf("volume %s (at %s) is %+v, want a ConfigMap", mount.Name, mount.MountPath, vol)
	}
	var cm *corev1.ConfigMap
	for _, c := range m.configMaps {
		if c.Name == vol.ConfigMap.Name {
			cm = c
		}
	}
	if cm == nil {
		t.Fatalf("volume %s names ConfigMap %s, which no manifest here defines", vol.Name, vol.ConfigMap.Name)
	}
	key := filepath.Base(file) // without items, a ConfigMap volume has one file per key
	for _, item := range vol.ConfigMap.Items {
		if item.Path == filepath.Base(file) {
			key = item.Key
		}
	}
	if _, ok := cm.Data[key]; !ok {
		t.Errorf("the scenario %s is key %q of ConfigMap %s, which has none (keys: %v)", file, key, cm.Name, keys(cm.Data))
	}
	// The ConfigMap is shown to anyone who may read it: a URL there
	// could hold a password.
	if strings.Contains(cm.Data[key], "://") {
		t.Errorf("ConfigMap %s's scenario names a URL: the store's URL belongs in the Secret", cm.Name)
	}
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// checkSecret checks that the store's URL reaches storebench from a
// Secret, and that no value in the manifests could be one with a password.
func checkSecret(t *testing.T, m manifests, c *corev1.Container, script string) {
	t.Helper()
	e := env(c, "STORE_URL")
	if e == nil || e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
		e.ValueFrom.SecretKeyRef.Name == "" || e.ValueFrom.SecretKeyRef.Key == "" {
		t.Fatalf("STORE_URL is %+v, want it from a Secret by secretKeyRef, never a literal", e)
	}
	if !strings.Contains(script, `--stores "$STORE_URL"`) {
		t.Errorf("the script does not give the Secret's URL as --stores \"$STORE_URL\":\n%s", script)
	}
	if strings.Contains(script, "://") || strings.Contains(script, "set -x") {
		t.Errorf("the script names a URL or traces its commands (set -x would print the URL):\n%s", script)
	}
	for _, v := range c.Env {
		if strings.Contains(v.Value, "://") {
			t.Errorf("env %s is a literal URL: a store's URL comes from the Secret", v.Name)
		}
	}
}

// TestDockerfileGoVersion: the image builds with go.mod's Go version; the
// golang image will not fetch a newer toolchain (GOTOOLCHAIN=local), so
// a go.mod raised past the Dockerfile's version breaks the image build.
func TestDockerfileGoVersion(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go ([0-9.]+)$`).FindSubmatch(mod)
	docker, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	arg := regexp.MustCompile(`(?m)^ARG GO_VERSION=([0-9.]+)$`).FindSubmatch(docker)
	if goLine == nil || arg == nil {
		t.Fatalf("no go line in go.mod (%q) or no ARG GO_VERSION=X.Y.Z in the Dockerfile (%q)", goLine, arg)
	}
	if string(goLine[1]) != string(arg[1]) {
		t.Errorf("go.mod says go %s, the Dockerfile's ARG GO_VERSION %s: want the same", goLine[1], arg[1])
	}
}
