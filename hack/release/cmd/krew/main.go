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

// Command krew builds the kubectl vko archives of a release and their krew
// manifest (make plugin-dist): upload the archives as the release's assets.
package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/carbogame/vault-keycloak-operator/hack/release/krew"
)

// binary is the plugin's command, as kubectl finds it on PATH.
const binary = "kubectl-vko"

func main() {
	root := flag.String("root", ".", "the repository")
	out := flag.String("out", "bin/plugin", "where the archives and vko.yaml go")
	version := flag.String("version", "", "the release, x.y.z")
	flag.Parse()
	if err := run(*root, *out, *version); err != nil {
		fmt.Fprintln(os.Stderr, "krew:", err)
		os.Exit(1)
	}
}

func run(root, out, version string) error {
	if version == "" {
		return fmt.Errorf("--version is required")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var platforms []krew.Platform
	for _, p := range []krew.Platform{{OS: "linux", Arch: "amd64"}, {OS: "linux", Arch: "arm64"}, {OS: "darwin", Arch: "amd64"}, {OS: "darwin", Arch: "arm64"}} {
		bin := filepath.Join(out, p.OS+"-"+p.Arch, binary)
		build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/kubectl-vko")
		build.Dir = root
		build.Env = append(os.Environ(), "GOOS="+p.OS, "GOARCH="+p.Arch, "CGO_ENABLED=0")
		if output, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("build for %s/%s: %w\n%s", p.OS, p.Arch, err, output)
		}
		archive := filepath.Join(out, p.Archive())
		if err := pack(archive, map[string]string{binary: bin, "LICENSE": filepath.Join(root, "LICENSE")}); err != nil {
			return err
		}
		data, err := os.ReadFile(archive)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		p.SHA256 = hex.EncodeToString(sum[:])
		platforms = append(platforms, p)
	}
	manifest, err := krew.Manifest(version, "https://github.com/carbogame/vault-keycloak-operator/releases/download/v"+version, platforms)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "vko.yaml"), manifest, 0o644); err != nil {
		return err
	}
	fmt.Printf("krew: wrote %d archives and %s\n", len(platforms), filepath.Join(out, "vko.yaml"))
	return nil
}

// pack writes a tar.gz of the files, by their name in the archive.
func pack(path string, files map[string]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for _, name := range []string{binary, "LICENSE"} {
		data, err := os.ReadFile(files[name])
		if err != nil {
			return err
		}
		mode := int64(0o644)
		if name == binary {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data))}); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return f.Close()
}
