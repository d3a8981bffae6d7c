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

package releases

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
)

// openshiftFeatures are the infrastructure features the OpenShift catalog
// asks every CSV to declare.
var openshiftFeatures = []string{"disconnected", "fips-compliant", "proxy-aware", "tls-profiles", "token-auth-aws", "token-auth-azure", "token-auth-gcp", "cnf", "cni", "csi"}

var (
	imageRef = regexp.MustCompile(`^([^/]+/)+[^/:]+:.+$`)
	httpURL  = regexp.MustCompile(`^https?://.+`)
	// openshiftVersions is a com.redhat.openshift.versions value: "v4.N"
	// (4.N and later), "=v4.N" (that one) or "v4.N-v4.M" (a range).
	openshiftVersions = regexp.MustCompile(`^(=?)v4\.(\d+)(?:-v4\.(\d+))?$`)
)

// OperatorHubProblems says what OperatorHub's community pipeline would fail
// or warn on in the bundle's CSV and annotations, beyond the
// operator-framework validators (bundle_test.go runs those): the CSV fields
// its static tests require, the CSV's name, the package, and the OpenShift
// versions against minKubeVersion. A CSV without createdAt passes only
// while the release is not dated (released says whether it is).
func OperatorHubProblems(csv *v1alpha1.ClusterServiceVersion, annotations map[string]string, released bool) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	a := csv.Annotations
	if !imageRef.MatchString(a["containerImage"]) {
		fail("CSV metadata.annotations.containerImage %q: must be an image reference with a tag", a["containerImage"])
	}
	if created, ok := a["createdAt"]; ok {
		if _, err := time.Parse(time.DateOnly, created); err != nil {
			if _, err := time.Parse(time.RFC3339, created); err != nil {
				fail("CSV metadata.annotations.createdAt %q: must be a date (ISO 8601)", created)
			}
		}
	} else if released {
		fail("CSV metadata.annotations.createdAt: required once the release is dated (the CHANGELOG's date)")
	}
	if !httpURL.MatchString(a["repository"]) {
		fail("CSV metadata.annotations.repository %q: must be an http(s) URL", a["repository"])
	}
	if len(a["support"]) < 3 {
		fail("CSV metadata.annotations.support %q: at least 3 characters", a["support"])
	}
	if len(a["description"]) < 10 {
		fail("CSV metadata.annotations.description: at least 10 characters")
	}
	for _, f := range openshiftFeatures {
		if v := a["features.operators.openshift.io/"+f]; v != "true" && v != "false" {
			fail("CSV metadata.annotations features.operators.openshift.io/%s %q: the OpenShift catalog needs \"true\" or \"false\"", f, v)
		}
	}
	if len(csv.Spec.Keywords) == 0 {
		fail("CSV spec.keywords: at least one")
	}
	if len(csv.Spec.DisplayName) < 3 || len(csv.Spec.DisplayName) > 50 {
		fail("CSV spec.displayName %q: 3 to 50 characters", csv.Spec.DisplayName)
	}
	if len(csv.Spec.Description) < 20 {
		fail("CSV spec.description: at least 20 characters")
	}
	problems = append(problems, iconProblems(csv)...)
	if len(csv.Spec.Maintainers) == 0 || len(csv.Spec.Links) == 0 || len(csv.Spec.Provider.Name) < 3 {
		fail("CSV spec.maintainers, spec.links and spec.provider.name (3 characters or more) are required")
	}
	pkg := annotations["operators.operatorframework.io.bundle.package.v1"]
	if want := pkg + ".v" + csv.Spec.Version.String(); csv.Name != want {
		fail("CSV metadata.name %q: must be %q (<package>.v<spec.version>)", csv.Name, want)
	}
	if csv.Spec.Replaces == csv.Name {
		fail("CSV spec.replaces: names the CSV itself")
	}
	return append(problems, openshiftProblems(csv.Spec.MinKubeVersion, annotations["com.redhat.openshift.versions"])...)
}

// iconProblems: one icon at least, each base64 data of a known image type.
func iconProblems(csv *v1alpha1.ClusterServiceVersion) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if len(csv.Spec.Icon) == 0 {
		fail("CSV spec.icon: one icon required")
	}
	for i, icon := range csv.Spec.Icon {
		if data, err := base64.StdEncoding.DecodeString(icon.Data); err != nil || len(data) < 3 {
			fail("CSV spec.icon[%d].base64data: must be base64 of the image", i)
		}
		switch icon.MediaType {
		case "image/png", "image/jpeg", "image/gif", "image/svg+xml":
		default:
			fail("CSV spec.icon[%d].mediatype %q: must be image/png, image/jpeg, image/gif or image/svg+xml", i, icon.MediaType)
		}
	}
	return problems
}

// openshiftProblems: every OpenShift the bundle is offered to must run a
// Kubernetes at least minKubeVersion (OpenShift 4.N runs 1.(N+13)).
func openshiftProblems(minKube, versions string) []string {
	if minKube == "" {
		return nil
	}
	kube, err := semver.ParseTolerant(minKube)
	if err != nil {
		return []string{fmt.Sprintf("CSV spec.minKubeVersion %q: %v", minKube, err)}
	}
	if versions == "" {
		return []string{fmt.Sprintf("metadata/annotations.yaml: com.redhat.openshift.versions is required with spec.minKubeVersion %s", minKube)}
	}
	m := openshiftVersions.FindStringSubmatch(versions)
	if m == nil {
		return []string{fmt.Sprintf("metadata/annotations.yaml: com.redhat.openshift.versions %q: must read v4.N, =v4.N or v4.N-v4.M", versions)}
	}
	lowest, _ := strconv.ParseUint(m[2], 10, 64)
	if lowest+13 < kube.Minor {
		return []string{fmt.Sprintf("metadata/annotations.yaml: com.redhat.openshift.versions %q offers OpenShift 4.%d (Kubernetes 1.%d), below spec.minKubeVersion %s", versions, lowest, lowest+13, minKube)}
	}
	return nil
}

// trimComment drops a YAML comment and surrounding blanks from a line.
func trimComment(line string) string {
	if i := strings.Index(line, "#"); i >= 0 {
		line = line[:i]
	}
	return strings.TrimSpace(line)
}
