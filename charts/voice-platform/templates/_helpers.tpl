{{- define "vp.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}{{ .Release.Name | trunc 50 | trimSuffix "-" }}{{- else -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- define "vp.labels" -}}
app.kubernetes.io/part-of: voice-platform
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{/* selector labels: include with (dict "ctx" $ "component" "backend") */}}
{{- define "vp.selector" -}}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "vp.image" -}}
{{- $tag := .image.tag | default .ctx.Values.global.imageTag | default .ctx.Chart.AppVersion -}}
{{- if .ctx.Values.global.imageRegistry -}}{{ printf "%s/%s:%s" .ctx.Values.global.imageRegistry .image.repository $tag }}{{- else -}}{{ printf "%s:%s" .image.repository $tag }}{{- end -}}
{{- end -}}

{{- define "vp.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" (include "vp.fullname" .)) -}}
{{- end -}}

{{- define "vp.mongodbUri" -}}
{{- if .Values.mongodb.enabled -}}{{ printf "mongodb://%s-mongodb:27017/" (include "vp.fullname" .) }}{{- else -}}{{ required "externalDatabase.mongodbUri is required when mongodb.enabled is false" .Values.externalDatabase.mongodbUri }}{{- end -}}
{{- end -}}

{{- define "vp.redisUrl" -}}
{{- if .Values.redis.enabled -}}{{ printf "redis://%s-redis:6379" (include "vp.fullname" .) }}{{- else -}}{{ required "externalDatabase.redisUrl is required when redis.enabled is false" .Values.externalDatabase.redisUrl }}{{- end -}}
{{- end -}}

{{- define "vp.backendUrl" -}}
{{- printf "http://%s-backend:%v" (include "vp.fullname" .) .Values.backend.settings.PORT -}}
{{- end -}}

{{/* env entries from a settings map: every key is a setting name */}}
{{- define "vp.settingsEnv" -}}
{{- range $k, $v := . }}
{{- if ne (toString $v) "" }}
- name: {{ $k }}
  value: {{ toString $v | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{- define "vp.secretEnv" -}}
{{- $secret := include "vp.secretName" .ctx -}}
{{- range .keys }}
- name: {{ . }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ . }}
{{- end }}
{{- end -}}

{{- define "vp.podSecurity" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 10001
  runAsGroup: 10001
  fsGroup: 10001
  seccompProfile:
    type: RuntimeDefault
{{- end -}}

{{- define "vp.containerSecurity" -}}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: ["ALL"]
{{- end -}}

{{/* LiveKit (telephony plane) URL the backend and workers use; empty when there is none. */}}
{{- define "vp.livekitUrl" -}}
{{- if .Values.livekit.enabled -}}
{{- printf "ws://%s-livekit:7880" (include "vp.fullname" .) -}}
{{- else if .Values.livekit.external.url -}}
{{- if not (regexMatch "^wss?://[^\\s]+$" .Values.livekit.external.url) -}}{{ fail (printf "livekit.external.url must be a ws:// or wss:// URL (got %q)" .Values.livekit.external.url) }}{{- end -}}
{{- .Values.livekit.external.url -}}
{{- end -}}
{{- end -}}

{{/*
The key name the in-chart livekit-server signs webhooks with: a second name for the Secret's LiveKit
secret, fixed so it can be written into LiveKit's config (the generated key name never is).
*/}}
{{- define "vp.livekitWebhookKey" -}}vp-webhook{{- end -}}

{{/* LIVEKIT_URL / LIVEKIT_API_KEY / LIVEKIT_API_SECRET env entries (none without a telephony plane). */}}
{{- define "vp.livekitEnv" -}}
{{- with include "vp.livekitUrl" . }}
- name: LIVEKIT_URL
  value: {{ . | quote }}
{{- include "vp.secretEnv" (dict "ctx" $ "keys" (list "LIVEKIT_API_KEY" "LIVEKIT_API_SECRET")) }}
{{- if $.Values.livekit.enabled }}
# The in-chart livekit-server signs its webhooks (inbound calls) as this key name, with the same secret.
- name: LIVEKIT_WEBHOOK_API_KEY
  value: {{ include "vp.livekitWebhookKey" $ | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
LiveKit's Redis as a config map: the in-chart Redis, else livekit.redis.url or
externalDatabase.redisUrl (redis[s]://[user:password@]host[:port]), always on database livekit.redis.db.
*/}}
{{- define "vp.livekitRedis" -}}
{{- $url := .Values.livekit.redis.url | default (include "vp.redisUrl" .) -}}
{{- $u := urlParse $url -}}
{{- if not (has $u.scheme (list "redis" "rediss")) }}{{ fail (printf "LiveKit's Redis must be a redis:// or rediss:// URL (livekit.redis.url or externalDatabase.redisUrl), got scheme %q" $u.scheme) }}{{ end -}}
{{- $host := $u.host -}}
{{- if not (regexMatch ":[0-9]+$" $host) }}{{ $host = printf "%s:6379" $host }}{{ end -}}
{{- $r := dict "address" $host "db" (int .Values.livekit.redis.db) -}}
{{- if eq $u.scheme "rediss" }}{{ $_ := set $r "use_tls" true }}{{ end -}}
{{- with $u.userinfo -}}
{{- $parts := splitn ":" 2 . -}}
{{- with $parts._0 }}{{ $_ := set $r "username" . }}{{ end -}}
{{- with (index $parts "_1") }}{{ $_ := set $r "password" . }}{{ end -}}
{{- end -}}
{{- toJson $r -}}
{{- end -}}

{{/* OTEL_EXPORTER_OTLP_ENDPOINT of every part when tracing.otlpEndpoint is set (docs/design.md §16); nothing when empty. */}}
{{- define "vp.tracingEnv" -}}
{{- with .Values.tracing.otlpEndpoint -}}
{{- if not (regexMatch "^https?://[^\\s/]+(/\\S*)?$" .) }}{{ fail (printf "tracing.otlpEndpoint must be an http(s) URL of the collector's OTLP/HTTP port, e.g. http://otel-collector:4318 (got %q)" .) }}{{ end -}}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- end -}}
