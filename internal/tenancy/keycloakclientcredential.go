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

package tenancy

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// ValidateKeycloakClientCredential checks the rules that need nothing but
// the object. Each error names the field and the rule.
func ValidateKeycloakClientCredential(kcc *secretsv1beta1.KeycloakClientCredential) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	target := spec.Child("target")

	errs = append(errs, ValidateRealm(realmField, kcc.Spec.Source.Realm)...)
	if ri := kcc.Spec.RefreshInterval; ri != nil && ri.Duration < secretsv1beta1.MinRefreshInterval {
		errs = append(errs, field.Invalid(spec.Child("refreshInterval"), ri.Duration.String(), fmt.Sprintf("must be at least %s", secretsv1beta1.MinRefreshInterval)))
	}
	if r := kcc.Spec.Rotation; r != nil {
		errs = append(errs, validateRotation(spec.Child("rotation"), r)...)
	}
	for _, msg := range validation.IsDNS1123Subdomain(kcc.Spec.Target.SecretName) {
		errs = append(errs, field.Invalid(target.Child("secretName"), kcc.Spec.Target.SecretName, "must be a Secret name: "+msg))
	}
	for i, ns := range kcc.Spec.Target.Namespaces {
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(target.Child("namespaces").Index(i), ns, "must be a namespace name: "+msg))
		}
	}

	keys := kcc.Spec.Target.Keys
	used := map[string]string{}
	for _, k := range []struct{ name, value string }{
		{"clientId", keys.ClientID}, {"clientSecret", keys.ClientSecret}, {"issuerURL", keys.IssuerURL}, {"tokenURL", keys.TokenURL},
		{"previousClientSecret", keys.PreviousClientSecret},
	} {
		if k.value == "" {
			continue
		}
		fld := target.Child("keys", k.name)
		for _, msg := range validation.IsConfigMapKey(k.value) {
			errs = append(errs, field.Invalid(fld, k.value, "must be a Secret key: "+msg))
		}
		if other, dup := used[k.value]; dup {
			errs = append(errs, field.Duplicate(fld, k.value+" (also the key of "+other+"; each value needs its own key)"))
		}
		used[k.value] = k.name
	}
	if keys.ClientSecret == "" && keys.ClientID == "" && keys.IssuerURL == "" && keys.TokenURL == "" {
		errs = append(errs, field.Required(target.Child("keys"), "at least one key must be set"))
	}

	errs = append(errs, metav1validation.ValidateLabels(kcc.Spec.Target.Labels, target.Child("labels"))...)
	for _, k := range sortedKeys(kcc.Spec.Target.Annotations) {
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(target.Child("annotations").Key(k), k, msg))
		}
	}
	errs = append(errs, ValidateTargetMetadata(target, kcc.Spec.Target.Labels, kcc.Spec.Target.Annotations)...)
	if t := kcc.Spec.Target.Type; t != "" {
		for _, msg := range validation.IsQualifiedName(string(t)) {
			errs = append(errs, field.Invalid(target.Child("type"), string(t), "must be a Secret type: "+msg))
		}
		errs = append(errs, validateTypedKeys(target.Child("type"), t, keys)...)
	}
	return errs
}

// requiredKeys are the data keys the API server demands of a Secret type
// (one of each inner list): a spec that cannot produce them would fail on
// every write, for ever.
var requiredKeys = map[corev1.SecretType][][]string{
	corev1.SecretTypeTLS:       {{corev1.TLSCertKey}, {corev1.TLSPrivateKeyKey}},
	corev1.SecretTypeBasicAuth: {{corev1.BasicAuthUsernameKey, corev1.BasicAuthPasswordKey}},
	corev1.SecretTypeSSHAuth:   {{corev1.SSHAuthPrivateKey}},
}

func validateTypedKeys(fld *field.Path, t corev1.SecretType, keys secretsv1beta1.SecretKeys) field.ErrorList {
	if t == corev1.SecretTypeDockercfg || t == corev1.SecretTypeDockerConfigJson {
		return field.ErrorList{field.Invalid(fld, string(t), "holds registry credentials as JSON, which a client secret is not")}
	}
	written := []string{keys.ClientID, keys.ClientSecret, keys.IssuerURL, keys.TokenURL}
	for _, oneOf := range requiredKeys[t] {
		if !slices.ContainsFunc(oneOf, func(k string) bool { return slices.Contains(written, k) }) {
			return field.ErrorList{field.Invalid(fld, string(t), fmt.Sprintf("a Secret of this type must hold the key %s: name it in spec.target.keys",
				strings.Join(oneOf, " or ")))}
		}
	}
	return nil
}

// CredentialRefreshInterval is how often Keycloak is read for kcc: the
// spec's, defaulted, and never more often than the bound (an object the
// webhook did not see may ask less).
func CredentialRefreshInterval(kcc *secretsv1beta1.KeycloakClientCredential) time.Duration {
	if ri := kcc.Spec.RefreshInterval; ri != nil {
		return max(ri.Duration, secretsv1beta1.MinRefreshInterval)
	}
	return secretsv1beta1.DefaultRefreshInterval
}

// TargetNamespaces are the namespaces kcc writes its Secret into: its own
// when it names none.
func TargetNamespaces(kcc *secretsv1beta1.KeycloakClientCredential) []string {
	if len(kcc.Spec.Target.Namespaces) == 0 {
		return []string{kcc.Namespace}
	}
	return kcc.Spec.Target.Namespaces
}

// validateRotation: an interval, when set, of at least MinRotationInterval
// (zero rotates only on request); a grace period within its bounds.
func validateRotation(path *field.Path, r *secretsv1beta1.RotationSpec) field.ErrorList {
	var errs field.ErrorList
	if d := r.Interval.Duration; d != 0 && d < secretsv1beta1.MinRotationInterval {
		errs = append(errs, field.Invalid(path.Child("interval"), d.String(), fmt.Sprintf("must be at least %s (or unset: rotations on request only)", secretsv1beta1.MinRotationInterval)))
	}
	switch g := r.GracePeriod; {
	case g == nil:
	case g.Duration < secretsv1beta1.MinGracePeriod || g.Duration > secretsv1beta1.MaxGracePeriod:
		errs = append(errs, field.Invalid(path.Child("gracePeriod"), g.Duration.String(), fmt.Sprintf("must be between %s and %s", secretsv1beta1.MinGracePeriod, secretsv1beta1.MaxGracePeriod)))
	case r.Interval.Duration >= secretsv1beta1.MinRotationInterval && g.Duration >= r.Interval.Duration:
		// (an interval refused above is not compared with)
		errs = append(errs, field.Invalid(path.Child("gracePeriod"), g.Duration.String(), fmt.Sprintf("must be shorter than spec.rotation.interval (%s)", r.Interval.Duration)))
	}
	if c := r.Consumers; c != nil {
		errs = append(errs, validateConsumers(path.Child("consumers"), c)...)
	}
	return errs
}

// validateConsumers: a label selector that parses, and a rollout timeout
// within its bounds.
func validateConsumers(path *field.Path, c *secretsv1beta1.RotationConsumers) field.ErrorList {
	var errs field.ErrorList
	if c.Selector != nil {
		if _, err := metav1.LabelSelectorAsSelector(c.Selector); err != nil {
			errs = append(errs, field.Invalid(path.Child("selector"), c.Selector.String(), err.Error()))
		}
	}
	if t := c.RolloutTimeout; t != nil && (t.Duration < secretsv1beta1.MinRolloutTimeout || t.Duration > secretsv1beta1.MaxRolloutTimeout) {
		errs = append(errs, field.Invalid(path.Child("rolloutTimeout"), t.Duration.String(),
			fmt.Sprintf("must be between %s and %s", secretsv1beta1.MinRolloutTimeout, secretsv1beta1.MaxRolloutTimeout)))
	}
	if len(c.Workloads) == 0 && c.Selector == nil && !c.Discover {
		errs = append(errs, field.Required(path, "name workloads, a selector, or discover: true"))
	}
	return errs
}
