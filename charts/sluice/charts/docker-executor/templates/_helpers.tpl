{{- define "docker-executor.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "docker-executor.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: sluice
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "docker-executor.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The executor API token, in the Secret the umbrella chart creates. */}}
{{- define "docker-executor.internalApiSecretName" -}}
{{- .Values.internalApiSecretName | default (printf "%s-sluice-internal-api" .Release.Name | trunc 63 | trimSuffix "-") -}}
{{- end -}}

{{- define "docker-executor.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
