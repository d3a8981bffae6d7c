{{/* Whether cert-manager provides the webhook certificate ("true"/"false"). */}}
{{- define "vko.certManager" -}}
{{- if eq .Values.webhook.certificates "cert-manager" -}}true
{{- else if eq .Values.webhook.certificates "secret" -}}false
{{- else if eq .Values.webhook.certificates "auto" -}}
{{- /* An admin's Secret already there stays the certificate: cert-manager installed later must not overwrite it. */ -}}
{{- $secret := lookup "v1" "Secret" .Release.Namespace .Values.webhook.certSecret -}}
{{- if and $secret (not (index (($secret.metadata).annotations | default dict) "cert-manager.io/certificate-name")) -}}false
{{- else -}}{{ .Capabilities.APIVersions.Has "cert-manager.io/v1" }}
{{- end -}}
{{- else -}}{{ fail (printf "webhook.certificates %q: must be auto, cert-manager or secret" .Values.webhook.certificates) }}
{{- end -}}
{{- end -}}

{{/*
The caBundle of the webhooks and the CRDs' conversion, in secret mode: the
value given, else the Secret's ca.crt. Installing against a cluster (not
helm template or lint, where lookup finds nothing) without either fails
with what to do.
*/}}
{{- define "vko.caBundle" -}}
{{- if ne (include "vko.certManager" .) "true" -}}
{{- $ca := .Values.webhook.caBundle -}}
{{- if not $ca -}}
{{- $secret := lookup "v1" "Secret" .Release.Namespace .Values.webhook.certSecret -}}
{{- if $secret -}}{{- $ca = index ($secret.data | default dict) "ca.crt" | default "" -}}{{- end -}}
{{- end -}}
{{- if and (not $ca) (lookup "v1" "Namespace" "" "kube-system") -}}
{{- fail (printf "webhook.certificates: no cert-manager here, so the webhooks need a certificate: create the kubernetes.io/tls Secret %s/%s (tls.crt, tls.key and ca.crt, for %s-webhook-service.%s.svc) first, or set webhook.caBundle, or install cert-manager" .Release.Namespace .Values.webhook.certSecret "vault-keycloak-operator" .Release.Namespace) -}}
{{- end -}}
{{- $ca -}}
{{- end -}}
{{- end -}}

{{/* The manager's image: by digest when one is given, else by tag. */}}
{{- define "vko.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default (printf "v%s" .Chart.AppVersion) }}
{{- end -}}
{{- end -}}
