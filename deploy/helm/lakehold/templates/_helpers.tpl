{{/* Names, labels and the checks every template shares. */}}

{{- define "lakehold.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* release-chart, unless the release name already contains the chart name. */}}
{{- define "lakehold.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "lakehold.selectorLabels" -}}
app.kubernetes.io/name: {{ include "lakehold.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "lakehold.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "lakehold.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "lakehold.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "lakehold.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "lakehold.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/*
lakehold.validate fails the render, naming the value to set, when the
values cannot make a working catalog. Every template that starts pods
includes it, so `helm template` and `helm install` stop before anything is
applied.
*/}}
{{- define "lakehold.validate" -}}
{{- if not .Values.database.existingSecret }}
{{- fail "database.existingSecret is required: the name of a Secret holding the Postgres URL under key database.urlKey (kubectl create secret generic lakehold-db --from-literal=url='postgres://...')" }}
{{- end }}
{{- if not .Values.secretKey.existingSecret }}
{{- fail "secretKey.existingSecret is required: the name of a Secret holding the base64 32-byte key under key secretKey.key (kubectl create secret generic lakehold-key --from-literal=secret-key=\"$(head -c 32 /dev/urandom | base64)\"); every replica must share it" }}
{{- end }}
{{- if not (has .Values.auth.mode (list "on" "none")) }}
{{- fail (printf "auth.mode %q: want \"on\" or \"none\" (quote on: YAML reads a bare on as true)" (toString .Values.auth.mode)) }}
{{- end }}
{{- if and (eq .Values.auth.mode "none") (not .Values.auth.insecureNoAuth) }}
{{- fail "auth.mode none serves the pod address without authentication: set auth.insecureNoAuth=true as well if that is meant" }}
{{- end }}
{{- if and (eq .Values.auth.mode "none") .Values.oidc.enabled }}
{{- fail "oidc.enabled turns authentication on: it cannot go with auth.mode none" }}
{{- end }}
{{- if and .Values.oidc.enabled (not .Values.oidc.existingSecret) (or (not .Values.oidc.issuer) (not .Values.oidc.audience)) }}
{{- fail "oidc.enabled needs oidc.issuer and oidc.audience, or oidc.existingSecret holding both" }}
{{- end }}
{{- if and .Values.serviceMonitor.enabled .Values.allowedHosts (not (has "*" .Values.allowedHosts)) }}
{{- fail "serviceMonitor.enabled with allowedHosts set: Prometheus scrapes pod addresses, whose Host would be refused (403); add \"*\" to allowedHosts or leave it empty" }}
{{- end }}
{{- if and .Values.ingress.enabled (not .Values.ingress.hosts) }}
{{- fail "ingress.enabled needs ingress.hosts (at least one host with its paths)" }}
{{- end }}
{{- range .Values.warehouses }}
{{- if or (not .name) (not .location) }}
{{- fail "every entry of warehouses needs a name and a location" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The environment of the catalog container: flags as CATALOG_* variables. */}}
{{- define "lakehold.env" -}}
- name: CATALOG_LISTEN
  value: {{ printf "0.0.0.0:%d" (int .Values.containerPort) | quote }}
- name: TMPDIR
  value: /tmp
- name: CATALOG_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.database.existingSecret }}
      key: {{ .Values.database.urlKey }}
- name: CATALOG_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.secretKey.existingSecret }}
      key: {{ .Values.secretKey.key }}
- name: CATALOG_MIGRATE
  value: {{ ternary "false" "true" .Values.migration.job | quote }}
- name: CATALOG_AUTH
  value: {{ .Values.auth.mode | quote }}
{{- if eq .Values.auth.mode "none" }}
- name: CATALOG_INSECURE_NO_AUTH
  value: "1"
{{- end }}
{{- with .Values.auth.authorization }}
- name: CATALOG_AUTHORIZATION
  value: {{ . | quote }}
{{- end }}
{{- with .Values.auth.bootstrapAdmin }}
- name: CATALOG_BOOTSTRAP_ADMIN
  value: {{ . | quote }}
{{- end }}
- name: CATALOG_TOKEN_LIFETIME
  value: {{ .Values.auth.tokenLifetime | quote }}
{{- include "lakehold.oidcEnv" . }}
{{- with .Values.warehouses }}
- name: CATALOG_WAREHOUSES
  value: {{ include "lakehold.warehouseList" $ | quote }}
{{- end }}
{{- with .Values.defaultWarehouse }}
- name: CATALOG_DEFAULT_WAREHOUSE
  value: {{ . | quote }}
{{- end }}
{{- with .Values.allowedHosts }}
- name: CATALOG_ALLOWED_HOSTS
  value: {{ join "," . | quote }}
{{- end }}
{{- with .Values.allowedOrigins }}
- name: CATALOG_ALLOWED_ORIGINS
  value: {{ join "," . | quote }}
{{- end }}
{{- if .Values.database.maxConns }}
- name: CATALOG_DB_MAX_CONNS
  value: {{ .Values.database.maxConns | toString | quote }}
{{- end }}
- name: CATALOG_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "lakehold.warehouseList" -}}
{{- $out := list }}
{{- range .Values.warehouses }}
{{- $out = append $out (printf "%s=%s" .name .location) }}
{{- end }}
{{- join "," $out }}
{{- end }}

{{- define "lakehold.oidcEnv" -}}
{{- if .Values.oidc.enabled }}
{{- if .Values.oidc.existingSecret }}
- name: CATALOG_OIDC_ISSUER
  valueFrom:
    secretKeyRef:
      name: {{ .Values.oidc.existingSecret }}
      key: {{ .Values.oidc.issuerKey }}
- name: CATALOG_OIDC_AUDIENCE
  valueFrom:
    secretKeyRef:
      name: {{ .Values.oidc.existingSecret }}
      key: {{ .Values.oidc.audienceKey }}
{{- else }}
- name: CATALOG_OIDC_ISSUER
  value: {{ .Values.oidc.issuer | quote }}
- name: CATALOG_OIDC_AUDIENCE
  value: {{ .Values.oidc.audience | quote }}
{{- end }}
- name: CATALOG_OIDC_SUBJECT_CLAIM
  value: {{ .Values.oidc.subjectClaim | quote }}
- name: CATALOG_OIDC_GROUPS_CLAIM
  value: {{ .Values.oidc.groupsClaim | quote }}
- name: CATALOG_CONSOLE_CLIENT_ID
  value: {{ .Values.oidc.consoleClientId | quote }}
{{- end }}
{{- end }}
