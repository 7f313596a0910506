package kubernetes_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/testkit"
)

// The tests run storebench as the image builds it: testkit.Binary, built
// once for them all.
func TestMain(m *testing.M) { testkit.Main(m) }

// podPassword is the store's password in the Secret: no pod log, cut
// result or merged result may hold it.
const podPassword = "k8s-secret-pw-5d1c"

// requirePassword makes a managed Redis ask for podPassword, as a store
// in a cluster would.
func requirePassword(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(conn, "*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$11\r\nrequirepass\r\n$%d\r\n%s\r\n", len(podPassword), podPassword)
	reply, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || reply != "+OK\r\n" {
		t.Fatalf("CONFIG SET requirepass: %q, %v", reply, err)
	}
}

// podLog runs the Job's container script as pod index of the Job would:
// its environment as the manifest gives it (the Secret's URL, the filled
// --start-at), the ConfigMap's scenario and the results volume under dir
// instead of / , and `storebench` on PATH a wrapper that shortens every
// phase to a second, so the test runs the manifest's own script and
// scenario in seconds. It returns the pod's log: stdout and stderr as one
// stream, as the container runtime keeps them.
func podLog(t *testing.T, script, dir string, index int, storeURL, startAt string) (string, error) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Join(dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		fmt.Sprintf("JOB_COMPLETION_INDEX=%d", index), "STORE_URL="+storeURL, "START_AT="+startAt)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	err := cmd.Run()
	return log.String(), err
}

// cut runs collect.sh --cut on a log, as collect.sh does for each pod.
func cut(log string) (stdout, stderr string, err error) {
	cmd := exec.Command("/bin/sh", "collect.sh", "--cut")
	cmd.Stdin = strings.NewReader(log)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err = cmd.Run()
	return so.String(), se.String(), err
}

// TestPodLogsCollectAndMerge runs the Job's pods locally: the container
// script of job.yaml, once per completion index, on the ConfigMap's
// scenario, against a Redis that wants a password given as the Secret's
// URL. Then collect.sh --cut takes each pod's result out of its log, the
// cut file is the very result.json the pod wrote, collect.sh collects
// them and storebench merges them as one run, and the password is in no
// log, no cut result and no merged file.
func TestPodLogsCollectAndMerge(t *testing.T) {
	m := decodeManifests(t, ".")
	job, _, script := theJob(t, m)
	shards := int(*job.Spec.Completions)

	dir := t.TempDir()
	local := strings.NewReplacer("/scenario/", dir+"/scenario/", "/results/", dir+"/results/")
	if strings.Count(script, "/scenario/") != 1 || !strings.Contains(script, "/results/") {
		t.Fatalf("the script no longer reads /scenario/ and writes /results/; update this test:\n%s", script)
	}
	script = local.Replace(script)
	for path, text := range map[string]string{
		"scenario/scenario.yaml": m.configMaps[0].Data["scenario.yaml"],
		"bin/storebench":         "#!/bin/sh\nexec " + testkit.Binary(t) + " \"$@\" --duration 1s --warmup 0s\n",
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	redis := servertest.Start(t, server.Redis, server.Options{})
	requirePassword(t, redis.Addr)
	storeURL := fmt.Sprintf("redis://:%s@%s", podPassword, redis.Addr)
	startAt := time.Now().Add(4 * time.Second).UTC().Truncate(time.Second).Add(time.Second).Format(time.RFC3339)

	logs := make([]string, shards)
	errs := make([]error, shards)
	var wg sync.WaitGroup
	for i := range shards {
		wg.Go(func() { logs[i], errs[i] = podLog(t, script, dir, i, storeURL, startAt) })
	}
	wg.Wait()

	for i, log := range logs {
		if errs[i] != nil {
			t.Fatalf("pod %d: %v\nlog:\n%s", i, errs[i], log)
		}
		if strings.Contains(log, podPassword) {
			t.Errorf("pod %d's log holds the store's password:\n%s", i, log)
		}
		got, stderr, err := cut(log)
		if err != nil {
			t.Fatalf("collect.sh --cut on pod %d's log: %v\n%s", i, err, stderr)
		}
		written, _ := filepath.Glob(filepath.Join(dir, "results", fmt.Sprintf("shard-%d", i), "*", "result.json"))
		if len(written) != 1 {
			t.Fatalf("pod %d wrote %v, want one result.json", i, written)
		}
		want, err := os.ReadFile(written[0])
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("pod %d: the cut result (%d bytes) is not the result.json it wrote (%d bytes)", i, len(got), len(want))
		}
		if strings.Contains(got, podPassword) {
			t.Errorf("pod %d's result holds the store's password", i)
		}
	}

	// A pod missing (failed, or its log gone) stops collect.sh before the
	// merge, saying how many of the Job's pods it found.
	if out, err := collect(t, dir, "one-missing", job.Name, shards, logs[1:]); err == nil ||
		!strings.Contains(out, fmt.Sprintf("%d of %d pods of job %s succeeded", shards-1, shards, job.Name)) {
		t.Errorf("collect.sh with a pod missing: %v\n%s\nwant an error that counts the pods", err, out)
	}
	out, err := collect(t, dir, "collected", job.Name, shards, logs)
	if err != nil {
		t.Fatalf("collect.sh: %v\n%s", err, out)
	}
	merged := filepath.Join(dir, "collected", "merged")
	r, err := result.Read(filepath.Join(merged, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Shard == nil || r.Shard.Count != shards || len(r.Shard.Merged) != shards {
		t.Errorf("merged result's shard record %+v, want a merge of %d", r.Shard, shards)
	}
	for _, f := range []string{"result.json", "report.html"} {
		b, err := os.ReadFile(filepath.Join(merged, f))
		if err != nil {
			t.Fatalf("merge wrote no %s: %v", f, err)
		}
		if bytes.Contains(b, []byte(podPassword)) {
			t.Errorf("merged %s holds the store's password", f)
		}
	}
	if strings.Contains(string(out), podPassword) {
		t.Errorf("collect.sh's output holds the store's password:\n%s", out)
	}
}

// collect runs collect.sh JOB DIR/into on the pods' logs, with a kubectl
// that answers the three commands collect.sh gives (the Job's completions,
// its succeeded pods, a pod's log) from logs, and refuses any other, and
// this test's storebench doing the merge.
func collect(t *testing.T, dir, into, job string, completions int, logs []string) (string, error) {
	t.Helper()
	logDir := filepath.Join(dir, into+"-pod-logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var pods strings.Builder
	for i, log := range logs {
		pod := fmt.Sprintf("%s-%d-x7k2p", job, i)
		fmt.Fprintln(&pods, pod)
		if err := os.WriteFile(filepath.Join(logDir, pod+".log"), []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kubectl := fmt.Sprintf(`#!/bin/sh
case "$*" in
"get job %[1]s -o jsonpath={.spec.completions}") printf %%s %[2]d ;;
"get pods -l job-name=%[1]s --field-selector=status.phase=Succeeded -o jsonpath={range .items[*]}{.metadata.name}{\"\n\"}{end}") printf %%s '%[3]s' ;;
"logs %[1]s-"*) cat "%[4]s/$2.log" ;;
*) echo "kubectl: not what collect.sh asks: $*" >&2; exit 1 ;;
esac
`, job, completions, pods.String(), logDir)
	kubectlDir := filepath.Join(dir, into+"-kubectl")
	if err := os.MkdirAll(kubectlDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kubectlDir, "kubectl"), []byte(kubectl), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "collect.sh", job, filepath.Join(dir, into))
	cmd.Env = append(os.Environ(), "PATH="+kubectlDir+string(os.PathListSeparator)+os.Getenv("PATH"), "STOREBENCH="+testkit.Binary(t))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestCutRefusesIncompleteLogs: a pod that failed before its result, a
// log cut short, or two results in one log are errors with a message,
// never an empty or partial result file for merge to trip on.
func TestCutRefusesIncompleteLogs(t *testing.T) {
	block := "--- storebench result 0 begin ---\nH4sIAAAAAAAAA6tWyirOz1OyUlCqTC1WqgUAlxpTUg8AAAA=\n--- storebench result 0 end ---\n"
	if got, stderr, err := cut("summary\n" + block); err != nil || got != `{"json": "yes"}` {
		t.Fatalf("a complete block: %q, %v %s; want its JSON", got, err, stderr)
	}
	for name, log := range map[string]string{
		"no result":     "storebench: --start-at \"@START_AT@\": want RFC 3339\n",
		"begin only":    "--- storebench result 0 begin ---\nH4sIAAAAAAAAA6tWyirOz1OyUlCqTC1WqgUAlxpTUg8AAAA=\n",
		"two results":   block + block,
		"cut short":     "--- storebench result 0 begin ---\nH4sIAAAAAAAAA6tWyirOz1OyUlCq\n--- storebench result 0 end ---\n",
		"not base64":    "--- storebench result 0 begin ---\n%%%\n--- storebench result 0 end ---\n",
		"empty block":   "--- storebench result 0 begin ---\n--- storebench result 0 end ---\n",
		"end before it": "--- storebench result 0 end ---\n--- storebench result 0 begin ---\nH4sI\n",
	} {
		got, stderr, err := cut(log)
		if err == nil || !strings.Contains(stderr, "collect.sh: ") {
			t.Errorf("%s: exit %v, stdout %q, stderr %q; want an error that says why", name, err, got, stderr)
		}
	}
}
