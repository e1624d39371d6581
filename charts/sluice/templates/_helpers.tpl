{{/* Name of the Secret holding the executor API token; the subcharts compute the same name. */}}
{{- define "sluice.internalApiSecretName" -}}
{{- printf "%s-sluice-internal-api" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Fails the render when mode and the subchart switches disagree. */}}
{{- define "sluice.validate" -}}
{{- $mode := .Values.mode -}}
{{- if not (has $mode (list "standalone" "distributed")) -}}
{{- fail (printf "mode must be standalone or distributed, not %q" $mode) -}}
{{- end -}}
{{- $standalone := eq $mode "standalone" -}}
{{- if ne (toString .Values.server.standalone) (toString $standalone) -}}
{{- fail (printf "mode: %s needs server.standalone=%t (or use -f values-distributed.yaml)" $mode $standalone) -}}
{{- end -}}
{{- if and $standalone (or .Values.jobs.enabled (index .Values "docker-executor" "enabled") (index .Values "k8s-executor" "enabled")) -}}
{{- fail "mode: standalone runs jobs and the executor inside the server; disable jobs, docker-executor and k8s-executor" -}}
{{- end -}}
{{- if and (not $standalone) (not .Values.jobs.enabled) -}}
{{- fail "mode: distributed needs jobs.enabled=true (scheduler, watchdog, retention)" -}}
{{- end -}}
{{- if and (not $standalone) (not (or (index .Values "docker-executor" "enabled") (index .Values "k8s-executor" "enabled"))) -}}
{{- fail "mode: distributed needs an executor: k8s-executor.enabled=true and/or docker-executor.enabled=true" -}}
{{- end -}}
{{- end -}}
