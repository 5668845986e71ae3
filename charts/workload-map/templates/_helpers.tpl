{{- define "workload-map.name" -}}workload-map-controller{{- end -}}
{{- define "workload-map.labels" -}}
app.kubernetes.io/name: {{ include "workload-map.name" . }}
app.kubernetes.io/part-of: workload-map
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}
{{- define "workload-map.selector" -}}
app.kubernetes.io/name: {{ include "workload-map.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
{{- define "workload-map.webhookClient" -}}
service:
  name: {{ include "workload-map.name" . }}
  namespace: {{ .Release.Namespace }}
  path: {{ .path }}
  port: 443
{{- if and (not .Values.webhook.certManager) .Values.webhook.caBundle }}
caBundle: {{ .Values.webhook.caBundle }}
{{- end }}
{{- end -}}
