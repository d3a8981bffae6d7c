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
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/blang/semver/v4"
	"github.com/prometheus/common/expfmt"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/carbogame/vault-keycloak-operator/internal/manager"
)

// Operator is a control plane (kube-apiserver + etcd) with the CRDs and
// webhook configurations installed, and the manager running in-process with
// the webhooks served to that API server — the wiring of cmd/main.go.
type Operator struct {
	Env        *envtest.Environment
	Config     *rest.Config
	Client     client.Client
	Kubeconfig string
	// Kubectl is the kubectl built beside kube-apiserver.
	KubectlPath string
	cancel      context.CancelFunc
	done        chan error
	logs        syncBuffer
}

// Logs returns everything the manager logged so far, for tests that prove
// no secret reaches a log line.
func (op *Operator) Logs() string { return op.logs.String() }

// logs are the buffers of the operators running in this process. The
// logger is set once: controller-runtime's loggers take the first
// SetLogger alone, so each operator's buffer is added here instead (two
// operators at once each get both logs: a superset, for the sweep).
var logs = &logFanout{buffers: map[*syncBuffer]bool{}}

type logFanout struct {
	once    sync.Once
	mu      sync.Mutex
	buffers map[*syncBuffer]bool
}

func (f *logFanout) add(b *syncBuffer) {
	f.once.Do(func() {
		logf.SetLogger(zap.New(zap.WriteTo(io.MultiWriter(os.Stderr, f)), zap.UseDevMode(true)))
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buffers[b] = true
}

func (f *logFanout) remove(b *syncBuffer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.buffers, b)
}

func (f *logFanout) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for b := range f.buffers {
		_, _ = b.Write(p)
	}
	return len(p), nil
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// RepoRoot is the root of this repository, for config/ paths.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Version is the version the code is released as next (VERSION; bundle/
// says the same, which hack/release's checks hold to).
func Version() semver.Version {
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "VERSION"))
	if err != nil {
		panic(fmt.Sprintf("read VERSION: %v", err))
	}
	return semver.MustParse(strings.TrimSpace(string(data)))
}

// Config of a test operator.
type Config struct {
	Options manager.Options
	// Identity, when set, is who the manager acts as (impersonated), instead
	// of the control plane's admin: the RBAC tests run it as the CSV's
	// ServiceAccount with exactly the CSV's permissions.
	Identity *rest.ImpersonationConfig
	// CRDDir holds the CRDs installed at start; config/crd/bases if empty.
	CRDDir string
	// BeforeManager runs with an admin client before the manager starts,
	// for what must exist first (the identity's RBAC).
	BeforeManager func(client.Client) error
}

// StartOperator starts the control plane and the manager with opts. Stop
// ends both.
func StartOperator(opts manager.Options) (*Operator, error) {
	return Start(Config{Options: opts})
}

// Start starts the control plane and the manager as cfg says.
func Start(config Config) (*Operator, error) {
	opts := config.Options
	op := &Operator{}
	logs.add(&op.logs)
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if err := requireFile(assets, "control plane", "KUBEBUILDER_ASSETS"); err != nil {
		return nil, err
	}
	root := RepoRoot()
	crdDir := config.CRDDir
	if crdDir == "" {
		crdDir = filepath.Join(root, "config", "crd", "bases")
	}
	scheme := manager.NewScheme()
	env := &envtest.Environment{
		Scheme:                scheme,
		CRDDirectoryPaths:     []string{crdDir},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{Paths: []string{filepath.Join(root, "config", "webhook")}},
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start kube-apiserver and etcd: %w", err)
	}
	op.Env, op.Config, op.KubectlPath = env, cfg, filepath.Join(assets, "kubectl")
	fail := func(err error) (*Operator, error) { _ = env.Stop(); return nil, err }

	if op.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return fail(err)
	}
	dir, err := os.MkdirTemp("", "vko-envtest-")
	if err != nil {
		return fail(err)
	}
	if op.Kubeconfig, err = writeAdminKubeconfig(env, dir); err != nil {
		return fail(err)
	}
	if config.BeforeManager != nil {
		if err := config.BeforeManager(op.Client); err != nil {
			return fail(err)
		}
	}
	mgrCfg := rest.CopyConfig(cfg)
	if config.Identity != nil {
		mgrCfg.Impersonate = *config.Identity
	}
	wh := env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(mgrCfg, ctrl.Options{
		Scheme: scheme,
		Cache:  manager.CacheOptions(),
		Client: manager.ClientOptions(),
		// Tests may run more than one manager in a process.
		Controller: ctrlconfig.Controller{SkipNameValidation: &skipNameValidation, ReconciliationTimeout: manager.ReconciliationTimeout},
		Metrics:    metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: wh.LocalServingHost, Port: wh.LocalServingPort, CertDir: wh.LocalServingCertDir,
		}),
	})
	if err != nil {
		return fail(err)
	}
	opts.EnableWebhooks = true
	events, err := manager.Setup(mgr, opts)
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	op.cancel, op.done = cancel, make(chan error, 1)
	go func() {
		err := mgr.Start(ctx)
		events.Stop(manager.EventsFlushTimeout)
		op.done <- err
	}()

	// The API server calls the webhooks: wait until they answer.
	if err := waitTLS(ctx, fmt.Sprintf("%s:%d", wh.LocalServingHost, wh.LocalServingPort), 30*time.Second); err != nil {
		op.Stop()
		return nil, err
	}
	return op, nil
}

var skipNameValidation = true

// Stop ends the manager, then the control plane.
func (op *Operator) Stop() {
	op.cancel()
	if err := <-op.done; err != nil {
		logf.Log.Error(err, "manager stopped with an error")
	}
	// For the run's secret sweep: the manager's log and metrics (it runs in
	// this process), the cluster's Events, statuses and secret values.
	KeepHaystack("log of the in-process manager", op.Logs())
	logs.remove(&op.logs)
	if families, err := metrics.Registry.Gather(); err == nil {
		var text bytes.Buffer
		for _, f := range families {
			_, _ = expfmt.MetricFamilyToText(&text, f)
		}
		KeepHaystack("metrics of the in-process manager", text.String())
	}
	KeepCluster(op.Client)
	_ = op.Env.Stop()
}
