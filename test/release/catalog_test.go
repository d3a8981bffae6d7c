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

// Package release proves the release catalog: 'make catalog-release'
// renders release/catalog-template.yaml plus VERSION at BUNDLE_IMG through opm's
// basic template, pulling real bundle images, into a catalog that opm
// validates, with the upgrade graph of the versions.
package release

import (
	"archive/tar"
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"sigs.k8s.io/yaml"

	"github.com/carbogame/vault-keycloak-operator/hack/release/bundle"
	"github.com/carbogame/vault-keycloak-operator/hack/release/releases"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

const packageName = "vault-keycloak-operator"

// The release catalog of every released version (release/bundles, the
// template's released images), the next (bundle/, released now: added to a
// copy of the template as a release commits it) and the one after it,
// retiring v1alpha1, being released (BUNDLE_IMG). Each bundle is pushed as a bundle
// image to a registry on this machine (TLS, trusted through SSL_CERT_FILE
// as a real one is through the system roots), and opm pulls them.
func TestReleaseCatalogRendersFromTheTemplate(t *testing.T) {
	if _, err := os.Stat(os.Getenv(harness.EnvOPMBin)); err != nil {
		t.Fatalf("opm: %s=%q: %v; run 'make test', which builds it", harness.EnvOPMBin, os.Getenv(harness.EnvOPMBin), err)
	}
	dir := t.TempDir()
	reg := httptest.NewTLSServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	certFile := filepath.Join(dir, "registry-ca.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: reg.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(reg.URL, "https://")
	image := func(version string) string {
		return fmt.Sprintf("%s/carbogame/vault-keycloak-operator-bundle:v%s", host, version)
	}

	// Every released bundle as it shipped; the next release (bundle/, at
	// VERSION), and the one after it, retiring v1alpha1, generated.
	released, err := releases.List(filepath.Join(harness.RepoRoot(), "release", "bundles"))
	if err != nil || len(released) == 0 {
		t.Fatalf("released bundles: %v (%d)", err, len(released))
	}
	last := released[len(released)-1].Version.String()
	next := harness.Version()
	after := semver.Version{Major: next.Major, Minor: next.Minor + 1}.String()
	bundles := map[string]string{next.String(): filepath.Join(harness.RepoRoot(), "bundle")}
	for _, r := range released {
		bundles[r.Version.String()] = r.Dir
	}
	gen, err := bundle.Generate(bundle.Options{
		ManifestsDir: filepath.Join(harness.RepoRoot(), "config", "manifests"),
		Version:      after, Image: "quay.io/carbogame/vault-keycloak-operator:v" + after, Replaces: packageName + ".v" + next.String(),
		Package: packageName, Channels: "stable", DefaultChannel: "stable", RetireVersions: []string{"v1alpha1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	bundles[after] = filepath.Join(dir, "bundle-"+after)
	if err := gen.Write(bundles[after]); err != nil {
		t.Fatal(err)
	}
	for version, bundleDir := range bundles {
		pushBundle(t, reg.Client().Transport, bundleDir, image(version))
	}

	// The committed template, its images pointing at this registry; the
	// next release released with it (the template written back, as a
	// release commits it), then the one after it being released.
	committed, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "release", "catalog-template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	templateFile := filepath.Join(dir, "template.yaml")
	template := regexp.MustCompile(`quay\.io/carbogame/vault-keycloak-operator-bundle:v(\S+)`).ReplaceAllStringFunc(string(committed), func(ref string) string {
		return image(strings.TrimPrefix(ref, "quay.io/carbogame/vault-keycloak-operator-bundle:v"))
	})
	if err := os.WriteFile(templateFile, []byte(template), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "catalog")
	for _, version := range []string{next.String(), after} {
		cmd := exec.Command("go", "run", "./cmd/catalog-release", "--template", templateFile, "--version", version,
			"--bundle-image", image(version), "--out", out, "--opm", os.Getenv(harness.EnvOPMBin), "--write-template="+fmt.Sprint(version == next.String()))
		cmd.Dir = filepath.Join(harness.RepoRoot(), "hack", "release") // the release tools' module
		cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+certFile)
		if output, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("catalog-release %s: %v\n%s", version, err, output)
		}
	}

	// One package, channel stable: the last release → next → after, each
	// bundle by its image.
	data, err := os.ReadFile(filepath.Join(out, packageName, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var channel struct {
		Name    string
		Entries []struct{ Name, Replaces string }
	}
	images := map[string]string{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var head struct{ Schema, Name, Image string }
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatal(err)
		}
		switch head.Schema {
		case "olm.channel":
			if err := yaml.Unmarshal([]byte(doc), &channel); err != nil {
				t.Fatal(err)
			}
		case "olm.bundle":
			images[head.Name] = head.Image
		}
	}
	if channel.Name != "stable" {
		t.Fatalf("channel %q, want stable", channel.Name)
	}
	replaces := map[string]string{}
	for _, e := range channel.Entries {
		replaces[e.Name] = e.Replaces
	}
	want := map[string]string{packageName + ".v" + next.String(): packageName + ".v" + last, packageName + ".v" + after: packageName + ".v" + next.String()}
	if len(released) == 1 {
		want[packageName+".v"+last] = ""
	}
	for csv, r := range want {
		if got, ok := replaces[csv]; !ok || got != r {
			t.Errorf("channel stable: %s replaces %q (listed %v), want %q", csv, got, ok, r)
		}
		version := strings.TrimPrefix(csv, packageName+".v")
		if images[csv] != image(version) {
			t.Errorf("bundle %s references %q, want %s", csv, images[csv], image(version))
		}
	}
	if strings.Contains(string(data), "olm.bundle.object") {
		t.Error("the release catalog inlines bundle manifests (olm.bundle.object): it should reference the images")
	}
}

// pushBundle pushes a bundle directory as a bundle image: its manifests/
// and metadata/ at the root, and the annotations as labels.
func pushBundle(t *testing.T, transport http.RoundTripper, dir, ref string) {
	t.Helper()
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: rel, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layer.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		t.Fatal(err)
	}
	var annotations struct{ Annotations map[string]string }
	data, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err == nil {
		err = yaml.Unmarshal(data, &annotations)
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.Config.Labels = annotations.Annotations
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img, remote.WithTransport(transport)); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
}
