{{- define "server.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "server.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: sluice
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "server.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The executor API token, in the Secret the umbrella chart creates. */}}
{{- define "server.internalApiSecretName" -}}
{{- .Values.internalApiSecretName | default (printf "%s-sluice-internal-api" .Release.Name | trunc 63 | trimSuffix "-") -}}
{{- end -}}

{{- define "server.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* The release's full name (<release>-sluice, or the release name when it already says sluice). */}}
{{- define "server.releaseFullname" -}}
{{- if contains "sluice" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-sluice" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
