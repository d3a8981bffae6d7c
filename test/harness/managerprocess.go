/*
Copyright 2026 The vault-keycloak-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package harness

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/carbogame/vault-keycloak-operator/internal/manager"
)

// ManagerUser is the API server user the manager process acts as in a
// ProcessCluster: its requests are told apart in the audit log.
const ManagerUser = "vko-manager"

var (
	buildOnce   sync.Once
	managerBin  string
	errBuilding error
)

// ManagerBinary builds the manager (./cmd) once per test process: the
// tests that need it run the binary users deploy, not the wiring in-process.
func ManagerBinary() (string, error) {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vko-manager-")
		if err != nil {
			errBuilding = err
			return
		}
		managerBin = filepath.Join(dir, "manager")
		build := exec.Command("go", "build", "-o", managerBin, "./cmd")
		build.Dir = RepoRoot()
		if out, err := build.CombinedOutput(); err != nil {
			errBuilding = fmt.Errorf("build the manager: %w\n%s", err, out)
		}
	})
	return managerBin, errBuilding
}

// ProcessCluster is a kube-apiserver and etcd with the operator's CRDs and
// webhook configurations installed, the webhooks pointed at a manager that
// runs as its own process (StartManager), and an audit log of every request.
type ProcessCluster struct {
	Env    *envtest.Environment
	Config *rest.Config
	Client client.Client
	// ManagerKubeconfig is the kubeconfig of ManagerUser (system:masters).
	ManagerKubeconfig string
	// AuditLog is the API server's audit log (JSON lines, Metadata level;
	// the Events created, with their bodies, to tell their reasons).
	AuditLog string

	dir string
}

const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Request
  verbs: [create]
  resources:
  - group: ""
    resources: [events]
  - group: events.k8s.io
    resources: [events]
- level: Metadata
`

// StartProcessCluster starts the control plane; dir receives its files and
// the managers' logs.
func StartProcessCluster(dir string) (*ProcessCluster, error) {
	return StartProcessClusterWithCRDs(dir, filepath.Join(RepoRoot(), "config", "crd", "bases"))
}

// StartProcessClusterWithCRDs is StartProcessCluster with the CRDs of
// crdDir (an older release's, for an upgrade).
func StartProcessClusterWithCRDs(dir, crdDir string) (*ProcessCluster, error) {
	return StartProcessClusterWith(dir, ClusterOptions{CRDDir: crdDir})
}

// ClusterOptions change what StartProcessClusterWith starts.
type ClusterOptions struct {
	// CRDDir holds the CRDs installed at start; config/crd/bases if empty.
	CRDDir string
	// FeatureGates are the API server's --feature-gates (for example
	// ShardedListAndWatch=true).
	FeatureGates string
}

// StartProcessClusterWith is StartProcessCluster as opts say.
func StartProcessClusterWith(dir string, opts ClusterOptions) (*ProcessCluster, error) {
	crdDir := opts.CRDDir
	if crdDir == "" {
		crdDir = filepath.Join(RepoRoot(), "config", "crd", "bases")
	}
	if err := requireFile(os.Getenv("KUBEBUILDER_ASSETS"), "control plane", "KUBEBUILDER_ASSETS"); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	pc := &ProcessCluster{dir: dir, AuditLog: filepath.Join(dir, "audit.log")}
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	root := RepoRoot()
	env := &envtest.Environment{
		Scheme:                manager.NewScheme(),
		CRDDirectoryPaths:     []string{crdDir},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			Paths:            []string{filepath.Join(root, "config", "webhook")},
			LocalServingHost: "127.0.0.1",
			LocalServingPort: port,
		},
	}
	env.ControlPlane.GetAPIServer().Configure().
		Set("audit-log-path", pc.AuditLog).
		// One file however long the run: the readers go on from an offset
		// in it. Unset, the API server's logger rotates it at 100 MB,
		// which bench-scale at 50,000 passes during its setup.
		Set("audit-log-maxsize", "1000000").
		Set("audit-policy-file", policy)
	if opts.FeatureGates != "" {
		env.ControlPlane.GetAPIServer().Configure().Append("feature-gates", opts.FeatureGates)
	}
	// etcd keeps its data beside the cluster's other files, where the
	// caller chose (make bench: in memory).
	etcdDir := filepath.Join(dir, "etcd")
	if err := os.MkdirAll(etcdDir, 0o700); err != nil {
		return nil, err
	}
	env.ControlPlane.Etcd = &envtest.Etcd{DataDir: etcdDir}
	// etcd refuses writes past its quota (2 GiB by default), which
	// bench-scale's 50,000 objects of each kind, their Secrets and Events
	// with the revisions between compactions may reach.
	env.ControlPlane.Etcd.Configure().Set("quota-backend-bytes", strconv.Itoa(8<<30))
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start kube-apiserver and etcd: %w", err)
	}
	pc.Env, pc.Config = env, cfg
	if pc.Client, err = client.New(cfg, client.Options{Scheme: env.Scheme}); err != nil {
		pc.Stop()
		return nil, err
	}
	user, err := env.AddUser(envtest.User{Name: ManagerUser, Groups: []string{"system:masters"}}, nil)
	if err == nil {
		var kubeconfig []byte
		if kubeconfig, err = user.KubeConfig(); err == nil {
			pc.ManagerKubeconfig = filepath.Join(dir, "manager.kubeconfig")
			err = os.WriteFile(pc.ManagerKubeconfig, kubeconfig, 0o600)
		}
	}
	if err != nil {
		pc.Stop()
		return nil, fmt.Errorf("kubeconfig of %s: %w", ManagerUser, err)
	}
	return pc, nil
}

// Stop ends the API server and etcd.
func (pc *ProcessCluster) Stop() {
	KeepCluster(pc.Client)
	_ = pc.Env.Stop()
	// etcd's data is the harness's to remove (envtest removes only a data
	// directory it chose itself); the caller's other files stay.
	_ = os.RemoveAll(filepath.Join(pc.dir, "etcd"))
}

// OperatorIdentity is the operator's ServiceAccount as a pod would have it:
// created in namespace (with the namespace), allowed in Vault (the README's
// policy and role; Kubernetes auth must be configured), and its token
// written to a file under dir for --vault-service-account-token-path.
func OperatorIdentity(ctx context.Context, c client.Client, cfg *rest.Config, vault *Vault, namespace, serviceAccount, dir string) (tokenPath, token string, err error) {
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: serviceAccount, Namespace: namespace}},
	} {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", "", fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
		}
	}
	if err := vault.AllowOperator(ctx, namespace, serviceAccount); err != nil {
		return "", "", err
	}
	if token, err = ServiceAccountToken(ctx, cfg, namespace, serviceAccount); err != nil {
		return "", "", err
	}
	tokenPath = filepath.Join(dir, "sa-token")
	return tokenPath, token, os.WriteFile(tokenPath, []byte(token), 0o600)
}

// ReadyFor reports whether conditions hold Ready=True for generation.
func ReadyFor(conditions []metav1.Condition, generation int64) bool {
	c := meta.FindStatusCondition(conditions, "Ready")
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == generation
}

// Manager is the manager binary running as its own process.
type Manager struct {
	*Process
	// MetricsURL serves the manager's Prometheus metrics (plain HTTP).
	MetricsURL string
	// WebhookURL is the webhook server's base URL.
	WebhookURL string
	// PprofAddr serves Go's profiles (/debug/pprof/).
	PprofAddr string
}

// StartManager runs the manager binary as a user deploys it (leader
// election on, the webhooks served to this API server), with env and extra
// flags (Vault, the operator's namespace, workers…); it returns once the
// webhooks and the health probe answer.
func (pc *ProcessCluster) StartManager(ctx context.Context, name string, env []string, extra ...string) (*Manager, error) {
	bin, err := ManagerBinary()
	if err != nil {
		return nil, err
	}
	var m *Manager
	err = retryWhilePortTaken(func() (*Process, error) {
		var err error
		m, err = pc.startManagerOnce(ctx, bin, name, env, extra)
		if m == nil {
			return nil, err
		}
		return m.Process, err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// WebhookPortFree, as an argument of StartManager, serves the replica's
// webhooks on a port picked free for each start attempt (behind a Service:
// Manager.WebhookURL says which). A port the test picked itself could be
// taken by a test package beside it before the manager binds it, and every
// retry would find it taken again.
const WebhookPortFree = "--webhook-port=free"

func (pc *ProcessCluster) startManagerOnce(ctx context.Context, bin, name string, env, extra []string) (*Manager, error) {
	// One call for every port, so that none is handed out twice.
	ports, err := FreePorts(4)
	if err != nil {
		return nil, err
	}
	extra = slices.Clone(extra)
	for i, a := range extra {
		if a == WebhookPortFree {
			extra[i] = "--webhook-port=" + strconv.Itoa(ports[3])
		}
	}
	metricsPort, probePort, pprofPort := ports[0], ports[1], ports[2]
	wh := pc.Env.WebhookInstallOptions
	args := append([]string{
		"--kubeconfig=" + pc.ManagerKubeconfig,
		"--leader-elect",
		"--webhook-cert-path=" + wh.LocalServingCertDir,
		"--webhook-port=" + strconv.Itoa(wh.LocalServingPort),
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(metricsPort),
		"--metrics-secure=false",
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(probePort),
		"--pprof-bind-address=127.0.0.1:" + strconv.Itoa(pprofPort),
	}, extra...)
	// Nothing of Vault from the test's environment but what env says.
	proc, err := start(name, filepath.Join(pc.dir, "logs"), withoutVaultEnv(env...), bin, args...)
	if err != nil {
		return nil, err
	}
	m := &Manager{Process: proc, PprofAddr: "127.0.0.1:" + strconv.Itoa(pprofPort),
		MetricsURL: "http://127.0.0.1:" + strconv.Itoa(metricsPort) + "/metrics",
		WebhookURL: "https://" + wh.LocalServingHost + ":" + strconv.Itoa(wh.LocalServingPort)}
	if err := proc.waitHTTP(ctx, "http://127.0.0.1:"+strconv.Itoa(probePort)+"/readyz"); err != nil {
		proc.Stop()
		return &Manager{Process: proc}, err
	}
	// extra may move the webhooks to a port of the replica's own (behind a
	// Service); the last --webhook-port wins, as in flag parsing.
	webhookAddr := fmt.Sprintf("%s:%d", wh.LocalServingHost, wh.LocalServingPort)
	for _, a := range extra {
		if port, ok := strings.CutPrefix(a, "--webhook-port="); ok {
			webhookAddr = "127.0.0.1:" + port
		}
	}
	// The process, not only someone, must answer there: a port taken by
	// another process makes the manager exit (and the start is retried).
	err = waitTLS(ctx, webhookAddr, 30*time.Second)
	if err == nil && proc.Exited() {
		err = fmt.Errorf("%s exited after its webhook port answered; last output:\n%s", name, proc.LogTail(20))
	}
	if err != nil {
		proc.Stop()
		return &Manager{Process: proc}, err
	}
	m.WebhookURL = "https://" + webhookAddr
	return m, nil
}

// Stop keeps the manager's metrics page for the run's secret sweep, then
// stops it.
func (m *Manager) Stop() {
	if os.Getenv(EnvSweepDir) != "" && !m.Exited() {
		if resp, err := http.Get(m.MetricsURL); err == nil {
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			KeepHaystack("metrics of "+m.name, string(body))
		}
	}
	m.Process.Stop()
}

// Metrics scrapes the manager's metrics.
func (m *Manager) Metrics() (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(m.MetricsURL)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", m.MetricsURL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// Sum adds up the samples of a counter family whose labels include match.
func Sum(families map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	var total float64
	for _, metric := range families[name].GetMetric() {
		if labelsInclude(metric, match) {
			total += metric.GetCounter().GetValue()
		}
	}
	return total
}

// Gauge adds up the samples of a gauge family whose labels include match.
func Gauge(families map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	var total float64
	for _, metric := range families[name].GetMetric() {
		if labelsInclude(metric, match) {
			total += metric.GetGauge().GetValue()
		}
	}
	return total
}

func labelsInclude(metric *dto.Metric, match map[string]string) bool {
	labels := map[string]string{}
	for _, l := range metric.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// HistogramMean is the mean of the observations of a histogram family whose
// labels include match, and their count.
func HistogramMean(families map[string]*dto.MetricFamily, name string, match map[string]string) (time.Duration, uint64) {
	var sum float64
	var count uint64
	f, ok := families[name]
	if !ok {
		return 0, 0
	}
	for _, metric := range f.GetMetric() {
		keep := true
		for _, l := range metric.GetLabel() {
			if v, ok := match[l.GetName()]; ok && v != l.GetValue() {
				keep = false
			}
		}
		if keep && metric.GetHistogram() != nil {
			sum += metric.GetHistogram().GetSampleSum()
			count += metric.GetHistogram().GetSampleCount()
		}
	}
	if count == 0 {
		return 0, 0
	}
	return time.Duration(sum / float64(count) * float64(time.Second)), count
}

// PeakRSS is the manager's peak resident set size (VmHWM), in bytes.
func (m *Manager) PeakRSS() (int64, error) { return m.status("VmHWM") }

// RSS is the manager's resident set size now (VmRSS), in bytes.
func (m *Manager) RSS() (int64, error) { return m.status("VmRSS") }

// status reads one size, in bytes, from the manager's /proc status.
func (m *Manager) status(field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", m.PID()))
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kib * 1024, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, m.PID())
}

// AuditEvent is what the tests read of an audit log line.
type AuditEvent struct {
	Verb string `json:"verb"`
	// UserAgent tells the replicas apart (each manager says its shard).
	UserAgent  string `json:"userAgent"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		APIGroup    string `json:"apiGroup"`
		APIVersion  string `json:"apiVersion"`
	} `json:"objectRef"`
	Stage string `json:"stage"`
	// ResponseStatus is the answer: a refused write (409 Conflict) is
	// still a request.
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	// RequestObject is logged for Event creates only: their reason.
	RequestObject *struct {
		Reason string `json:"reason"`
	} `json:"requestObject"`
	// RequestReceived is when the API server got the request: one answered
	// late (a 504 a minute on) may be logged after its sender stopped.
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
}

// Write reports whether the request changed state.
func (e AuditEvent) Write() bool {
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// AuditEvents reads the audit log from byte offset on, and returns the
// completed requests and the offset to read from next time.
func (pc *ProcessCluster) AuditEvents(offset int64) ([]AuditEvent, int64, error) {
	return pc.auditEvents(offset, "ResponseComplete", "")
}

// AuditEventsBy is AuditEvents for one user's requests alone: at 50,000
// objects the log holds millions of lines, most of them the test's own,
// which are neither decoded nor kept.
func (pc *ProcessCluster) AuditEventsBy(offset int64, username string) ([]AuditEvent, int64, error) {
	return pc.auditEvents(offset, "ResponseComplete", username)
}

// AuditWatchesStarted is AuditEvents for the watches that started (a
// watch completes only when it ends).
func (pc *ProcessCluster) AuditWatchesStarted(offset int64) ([]AuditEvent, int64, error) {
	events, offset, err := pc.auditEvents(offset, "ResponseStarted", "")
	return slices.DeleteFunc(events, func(e AuditEvent) bool { return e.Verb != "watch" }), offset, err
}

func (pc *ProcessCluster) auditEvents(offset int64, stage, username string) ([]AuditEvent, int64, error) {
	var user []byte
	if username != "" {
		user, _ = json.Marshal(map[string]string{"username": username})
		user = bytes.Trim(user, "{}") // "username":"…", as the log writes it
	}
	var events []AuditEvent
	offset, err := readLines(pc.AuditLog, offset, func(line []byte) {
		if user != nil && !bytes.Contains(line, user) {
			return
		}
		var e AuditEvent
		if json.Unmarshal(line, &e) == nil && e.Stage == stage && (username == "" || e.User.Username == username) {
			events = append(events, e)
		}
	})
	return events, offset, err
}

// InsecureWebhookClient calls the manager's webhook server directly (its
// certificate is the test control plane's own).
func InsecureWebhookClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a test's own loopback webhook server
		MaxIdleConnsPerHost: 4,
	}}
}

// StartControllerManager runs kube-controller-manager (from VKO_KUBE_DIR)
// with only the named controllers (kube-controller-manager's names, e.g.
// "namespace", which empties and removes a deleted namespace), for what
// envtest leaves out. It runs as its own admin user.
func (pc *ProcessCluster) StartControllerManager(controllers ...string) (*Process, error) {
	bin := filepath.Join(os.Getenv(EnvKubeDir), "kube-controller-manager")
	if err := requireFile(os.Getenv(EnvKubeDir), "kube-controller-manager", EnvKubeDir); err != nil {
		return nil, err
	}
	kubeconfig, err := writeAdminKubeconfig(pc.Env, pc.dir)
	if err != nil {
		return nil, err
	}
	proc, err := start("kube-controller-manager", filepath.Join(pc.dir, "logs"), nil, bin,
		"--kubeconfig="+kubeconfig, "--controllers="+strings.Join(controllers, ","),
		"--leader-elect=false", "--use-service-account-credentials=false", "--secure-port=0")
	if err != nil {
		return nil, err
	}
	// With --secure-port=0 it serves no health check; a wrong flag or
	// controller name ends it within a second.
	time.Sleep(2 * time.Second)
	if proc.Exited() {
		return nil, fmt.Errorf("kube-controller-manager exited at start:\n%s", proc.LogTail(10))
	}
	return proc, nil
}
