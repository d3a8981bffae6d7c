# vault-keycloak-operator — the targets an operator-sdk (go/v4) user expects,
# plus the ones that build the real components the tests run against.
#
# The two commands that set everything up on a fresh machine:
#   make demo   the operator at work on a local control plane, Vault and Keycloak
#   make test   unit and envtest tests against the real services
#
# Versions of the real components live in hack/versions.env; hack/ensure.sh
# builds or fetches each into $(VKO_CACHE_DIR) (outside the clone) once.

include hack/versions.env

# The version this code is released as next; it moves with the code (the
# bundle, the image tag and the CHANGELOG's first section say the same, and
# 'go -C hack/release test ./...' fails when they do not). Released bundles
# are frozen under release/bundles/<version>/. See docs/development.md, Releasing.
VERSION ?= $(shell cat VERSION)
RELEASED_BUNDLES := $(CURDIR)/release/bundles
IMAGE_TAG_BASE ?= quay.io/carbogame/vault-keycloak-operator
IMG ?= $(IMAGE_TAG_BASE):v$(VERSION)
BUNDLE_IMG ?= $(IMAGE_TAG_BASE)-bundle:v$(VERSION)
CATALOG_IMG ?= $(IMAGE_TAG_BASE)-catalog:v$(VERSION)
CHANNELS ?= stable
DEFAULT_CHANNEL ?= stable

SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

## Location of the tools built into the clone.
LOCALBIN ?= $(shell pwd)/bin
$(LOCALBIN):
	mkdir -p $(LOCALBIN)

CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
KUSTOMIZE ?= $(LOCALBIN)/kustomize
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint

CONTROLLER_TOOLS_VERSION ?= v0.23.0
KUSTOMIZE_VERSION ?= v5.8.1
GOLANGCI_LINT_VERSION ?= v2.15.0

ENSURE := hack/ensure.sh
# The environment that points the tests at the real components (services:
# kube-apiserver, etcd, Vault, Keycloak; olm: what the OLM, Helm and
# monitoring tests add), built first; a missing prerequisite or a failed
# build stops make there (assigned to a variable, so its exit status counts).
COMPONENTS := hack/components-env.sh
# The Go modules of the clone: the manager's (.), the release tools'
# (hack/release) and the tests' (test: the harness, the suites, the bench
# and the demo). Only the first is built into the manager.
MODULES := . hack/release test
# Go test timeout: envtest suites start a kube-apiserver each. -count=1 below:
# results are never reused from the build cache, since they stand on live services.
TEST_TIMEOUT ?= 30m

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate CRDs, RBAC and webhook configurations from the markers.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd webhook paths="./api/..." paths="./internal/..." paths="./cmd/..." output:crd:artifacts:config=config/crd/bases

.PHONY: generate
generate: controller-gen ## Generate DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## Run go fmt.
	@for m in $(MODULES); do go -C $$m fmt ./...; done

.PHONY: vet
vet: ## Run go vet.
	@for m in $(MODULES); do go -C $$m vet ./...; done

.PHONY: lint
lint: golangci-lint ## Run golangci-lint.
	@for m in $(MODULES); do (cd $$m && $(GOLANGCI_LINT) run --config $(CURDIR)/.golangci.yml ./...); done

.PHONY: verify-generated
verify-generated: manifests generate bundle catalog chart reference ## Fail if generated files differ from what is committed.
	@git diff --exit-code -- api config bundle local-catalog dist docs/reference.md || { echo "generated files are stale: run 'make manifests generate bundle catalog chart reference' and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- api config bundle local-catalog dist docs/reference.md)" || { git status --porcelain -- api config bundle local-catalog dist docs/reference.md; echo "untracked generated files: commit them" >&2; exit 1; }

.PHONY: prereqs
prereqs: ## Say at once what this machine lacks to build the real components (make test and make demo check first).
	@hack/prereqs.sh

.PHONY: envtest
envtest: ## Build kube-apiserver, etcd and kubectl into the cache (for KUBEBUILDER_ASSETS).
	@$(ENSURE) envtest

.PHONY: services-bin
services-bin: ## Build Vault and fetch Keycloak into the cache.
	@$(ENSURE) vault-bin
	@$(ENSURE) keycloak

.PHONY: test
# The suites that prove the Vault side, run a second time against OpenBao
# (docs/development.md says which of the operator's Vault calls they cover).
VAULT_SUITES ?= ./integration/vaultapp/ ./integration/multicluster/

test: prereqs manifests generate fmt vet ## Run all tests against a real kube-apiserver, Vault and Keycloak; then sweep all they kept for secret values.
	components=$$($(COMPONENTS) services olm) && eval "$$components" && \
	go -C test run ./harness/cmd/with-services --sweep -- ../hack/failures.sh bash -c '\
		go -C .. test ./... -count=1 -timeout $(TEST_TIMEOUT) && \
		go -C ../hack/release test ./... -count=1 && \
		go test ./... -count=1 -timeout $(TEST_TIMEOUT) && \
		VKO_VAULT_SERVER=openbao go test $(VAULT_SUITES) -count=1 -timeout $(TEST_TIMEOUT)' 

.PHONY: cover
cover: ## The unit layer's coverage (cover.out; make test does not instrument: the copies cost CI's cold path a compile of every package).
	go test ./api/... ./internal/... -count=1 -coverprofile cover.out
	go tool cover -func cover.out | tail -1

.PHONY: test-unit
test-unit: ## Run the fast unit layer alone: rules and decisions, no service, seconds.
	go test ./api/... ./internal/... ./cmd/... -count=1

# Fuzz targets, as package:Target; each runs for FUZZTIME. A finding is
# saved under the package's testdata/fuzz and fails the run.
FUZZ_TARGETS ?= ./api/vault/v1alpha1:FuzzVaultAppConversion \
	./api/secrets/v1alpha1:FuzzKeycloakClientCredentialConversion \
	./api/secrets/v1alpha1:FuzzKeycloakServerConversion \
	./internal/webhook/vault/v1beta1:FuzzVaultAppAdmission \
	./internal/webhook/secrets/v1beta1:FuzzKeycloakClientCredentialAdmission \
	./internal/webhook/secrets/v1beta1:FuzzKeycloakServerAdmission
FUZZTIME ?= 15s

.PHONY: fuzz
fuzz: ## Fuzz the conversions and the validating webhooks, FUZZTIME each (no service).
	@hack/fuzz.sh $(FUZZTIME) $(FUZZ_TARGETS)

# The fleet benchmark (test/bench): 1,000 objects of each kind against the
# real services, the manager binary behind counting proxies; every figure is
# a count or a ratio to a limit measured in the same run, and each missed
# target fails. One run is the measurement (-benchtime 1x); the table is
# printed and written as JSON to $(BENCH_OUT). See docs/benchmarks.md.
# The timeout is a guard, not a target: a run on 2 cores took 29m51s
# (2026-12-05), and a killed bench reports nothing.
BENCH_OUT ?= $(LOCALBIN)/bench.json

.PHONY: bench
bench: manifests generate ## Measure convergence, steady state, logins, repair, memory and conversion at 1,000 objects; fails on a missed target.
	components=$$($(COMPONENTS) services) && eval "$$components" && \
	VKO_BENCH_OUT="$(BENCH_OUT)" \
	go -C test run ./harness/cmd/with-services -- \
		go test ./bench/ -run '^$$' -bench '^(BenchmarkFleet|BenchmarkOpenBao)$$' -benchtime 1x -count=1 -timeout 55m -v

# The single replica's ceiling, opt-in (not in CI): SCALE VaultApps and as
# many credentials over 5,000 namespaces (10,000: 13 to 23 minutes on the
# 2-core CI machine; 50,000: hours). SCALE_KINDS=vaultapps (or credentials)
# measures one kind alone. See docs/benchmarks.md.
SCALE ?= 10000
SCALE_KINDS ?=

.PHONY: bench-scale
bench-scale: manifests generate ## Opt-in: one replica at SCALE objects of each kind over 5,000 namespaces (not in CI; see docs/benchmarks.md).
	components=$$($(COMPONENTS) services) && eval "$$components" && \
	VKO_BENCH_OUT="$(LOCALBIN)/bench-scale-$(SCALE)$(if $(SCALE_KINDS),-$(SCALE_KINDS)).json" \
	VKO_SCALE=$(SCALE) VKO_SCALE_KINDS=$(SCALE_KINDS) \
	go -C test run ./harness/cmd/with-services -- \
		go test ./bench/ -run '^$$' -bench '^BenchmarkScale$$' -benchtime 1x -count=1 -timeout 6h -v

.PHONY: olm-e2e
olm-e2e: ## Install, run and upgrade the operator through an OLM Subscription on a local cluster (kwok; no container runtime, no root: its own network namespace); part of make test.
	components=$$($(COMPONENTS) services olm) && eval "$$components" && \
	go -C test run ./harness/cmd/with-services -- \
		go test ./olm/ -count=1 -v -timeout 20m

.PHONY: demo
# VAULT=openbao runs the demo against OpenBao, which needs no Vault build.
VAULT ?= vault

demo: prereqs manifests ## Show the operator at work on a local control plane with a real Vault and Keycloak (VAULT=openbao: OpenBao; DEMO_ARGS=--once: one pass).
	components=$$($(COMPONENTS) $(if $(filter openbao,$(VAULT)),demo-openbao,services)) && eval "$$components" && \
	go -C test run ./demo --vault=$(VAULT) $(DEMO_ARGS) 2>$${DEMO_LOG:-/tmp/vko-demo-manager.log}

##@ Build

.PHONY: build
build: manifests generate fmt vet ## Build the manager binary.
	go build -o bin/manager cmd/main.go

.PHONY: run
run: manifests generate fmt vet ## Run the manager against the cluster of the current kubeconfig.
	go run ./cmd/main.go

.PHONY: docker-build
docker-build: ## Build the manager image (needs a Docker engine).
	@if ! docker info >/dev/null 2>&1; then echo "docker-build: no Docker engine answers on this machine; the image cannot be built here (Dockerfile is ready for a machine that has one)" >&2; exit 1; fi
	docker build -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the manager image.
	docker push $(IMG)

##@ Deployment

KUBECTL ?= $(shell $(ENSURE) kube kubectl 2>/dev/null)/kubectl

.PHONY: install
install: manifests kustomize ## Install the CRDs into the cluster of the current kubeconfig.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side --force-conflicts -f -

.PHONY: uninstall
uninstall: manifests kustomize ## Remove the CRDs from the cluster of the current kubeconfig.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: deploy
deploy: manifests kustomize ## Deploy the operator (needs cert-manager) to the cluster of the current kubeconfig.
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(KUSTOMIZE) build config/default | $(KUBECTL) apply --server-side --force-conflicts -f -

.PHONY: undeploy
undeploy: kustomize ## Remove the operator from the cluster of the current kubeconfig.
	$(KUSTOMIZE) build config/default | $(KUBECTL) delete --ignore-not-found -f -

##@ Bundle

.PHONY: bundle
bundle: manifests ## Generate the OLM bundle into bundle/ from config/ (VERSION=x.y.z; BUNDLE_ARGS=--retire-versions=v1alpha1 for the release that stops serving it).
	go -C hack/release run ./cmd/bundle --out $(CURDIR)/bundle --manifests $(CURDIR)/config/manifests --version $(VERSION) --image $(IMG) --channels $(CHANNELS) --default-channel $(DEFAULT_CHANNEL) --released $(RELEASED_BUNDLES) --changelog $(CURDIR)/CHANGELOG.md $(if $(REPLACES),--replaces $(REPLACES)) $(BUNDLE_ARGS)

.PHONY: chart
chart: manifests ## Generate the Helm chart into dist/chart from config/ (the bundle's CRDs, RBAC, webhooks and manager; monitoring where the cluster has it).
	go -C hack/release run ./cmd/chart --out $(CURDIR)/dist/chart --config $(CURDIR)/config --version $(VERSION)

.PHONY: reference
reference: manifests ## Generate docs/reference.md (resources, manager flags, metrics, condition and Event reasons, annotations) from the code.
	go -C hack/release run ./cmd/reference --out $(CURDIR)/docs/reference.md --root $(CURDIR)

.PHONY: plugin
plugin: ## Build the kubectl plugin (bin/kubectl-vko: copy it onto PATH, then kubectl vko).
	go build -o bin/kubectl-vko ./cmd/kubectl-vko

.PHONY: plugin-dist
plugin-dist: ## Build the kubectl vko archives of the release and their krew manifest into bin/plugin (upload them as the release's assets).
	go -C hack/release run ./cmd/krew --root $(CURDIR) --out $(CURDIR)/bin/plugin --version $(VERSION)

.PHONY: release-check
release-check: ## Say what keeps the next release from shipping: the version out of step, a CRD change unsafe for the last release's objects, what OLM v1 or OperatorHub would refuse, the upgrade graph (also run by make test).
	go -C hack/release run ./cmd/release-check --root $(CURDIR)

.PHONY: release-freeze
release-freeze: ## Cut VERSION: keep bundle/ as it ships under release/bundles/$(VERSION) (date the CHANGELOG section and run make bundle first; docs/development.md, Releasing).
	@test ! -e release/bundles/$(VERSION) || { echo "release/bundles/$(VERSION) exists: a release is never regenerated" >&2; exit 1; }
	mkdir -p release/bundles/$(VERSION) && cp -R bundle/manifests bundle/metadata bundle/tests release/bundles/$(VERSION)/
	cd release/bundles/$(VERSION) && find . -type f | LC_ALL=C sort | xargs sha256sum > ../$(VERSION).sha256
	$(MAKE) release-check

.PHONY: catalog
catalog: ## Render the local test catalog (local-catalog/: bundle/ inlined, no image) that the OLM test serves.
	CHANNEL=$(DEFAULT_CHANNEL) hack/catalog.sh

.PHONY: bundle-build
bundle-build: ## Build the bundle image (needs a Docker engine).
	@if ! docker info >/dev/null 2>&1; then echo "bundle-build: no Docker engine answers on this machine; bundle/ itself is what OLM tests here install from" >&2; exit 1; fi
	docker build -f bundle.Dockerfile -t $(BUNDLE_IMG) .

.PHONY: catalog-release
catalog-release: ## Render the release catalog (release/catalog) from release/catalog-template.yaml plus VERSION at BUNDLE_IMG; the images must be pushed.
	go -C hack/release run ./cmd/catalog-release --template $(CURDIR)/release/catalog-template.yaml --out $(CURDIR)/release/catalog --version $(VERSION) --bundle-image $(BUNDLE_IMG) --opm "$$($(ENSURE) opm)/opm" $(CATALOG_RELEASE_ARGS)

.PHONY: catalog-build
catalog-build: ## Build the catalog image of release/catalog (make catalog-release first; needs a Docker engine).
	@if ! docker info >/dev/null 2>&1; then echo "catalog-build: no Docker engine answers on this machine" >&2; exit 1; fi
	docker build -f catalog.Dockerfile -t $(CATALOG_IMG) .

##@ Tools

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN)
$(CONTROLLER_GEN): | $(LOCALBIN)
	GOBIN=$(LOCALBIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)

.PHONY: kustomize
kustomize: $(KUSTOMIZE)
$(KUSTOMIZE): | $(LOCALBIN)
	GOBIN=$(LOCALBIN) go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT)
$(GOLANGCI_LINT): | $(LOCALBIN)
	GOBIN=$(LOCALBIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
