// The Kubernetes objects the smoke plays: rendered by `kubectl kustomize` from an overlay, parsed
// from YAML, and typed down to the fields the adapter reads (everything else is left as it is).
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { promisify } from "node:util";

/** Any rendered object; `kind` and `metadata.name` are always present. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

export interface KeyRef {
  name: string;
  key: string;
  optional?: boolean;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    configMapKeyRef?: KeyRef;
    secretKeyRef?: KeyRef;
    fieldRef?: { fieldPath: string };
    resourceFieldRef?: unknown;
  };
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name: string; optional?: boolean };
  secretRef?: { name: string; optional?: boolean };
}

/** One probe as the manifest gives it; the timing defaults are Kubernetes'. */
export interface Probe {
  httpGet?: { path?: string; port: number | string; host?: string; scheme?: string; httpHeaders?: HttpHeader[] };
  grpc?: { port: number; service?: string };
  tcpSocket?: { port: number | string; host?: string };
  exec?: { command: string[] };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
}

export interface HttpHeader {
  name: string;
  value: string;
}

export interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  privileged?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
  seccompProfile?: { type: string };
  fsGroup?: number;
  supplementalGroups?: number[];
}

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  volumeMounts?: { name: string; mountPath: string; subPath?: string; readOnly?: boolean }[];
  securityContext?: SecurityContext;
  resources?: { limits?: Record<string, string | number>; requests?: Record<string, string | number> };
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
}

export interface Volume {
  name: string;
  emptyDir?: { medium?: string; sizeLimit?: string };
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  configMap?: { name: string; items?: { key: string; path: string }[]; defaultMode?: number; optional?: boolean };
  secret?: { secretName: string; items?: { key: string; path: string }[]; defaultMode?: number; optional?: boolean };
  [source: string]: unknown;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  securityContext?: SecurityContext;
  restartPolicy?: string;
  terminationGracePeriodSeconds?: number;
}

export interface PodTemplate {
  metadata?: { labels?: Record<string, string> };
  spec: PodSpec;
}

/** Deployment, StatefulSet, Job (and the template-less Pod) share this reading. */
export interface Workload extends K8sObject {
  spec: {
    replicas?: number;
    serviceName?: string;
    template: PodTemplate;
    volumeClaimTemplates?: { metadata: { name: string } }[];
    backoffLimit?: number;
    activeDeadlineSeconds?: number;
  };
}

export interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
}

export interface Service extends K8sObject {
  spec: { selector?: Record<string, string>; ports?: ServicePort[]; type?: string; clusterIP?: string };
}

export interface DataObject extends K8sObject {
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/** The subset of the yaml package (a dev dependency of test/) that the smoke uses. */
interface YamlModule {
  parseAllDocuments(src: string): { errors: { message: string }[]; toJS(): unknown }[];
}

/** Renders an overlay with `kubectl kustomize DIR`; rejects with kubectl's message. */
export async function renderOverlay(dir: string): Promise<string> {
  const { stdout } = await promisify(execFile)("kubectl", ["kustomize", dir], { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** Parses a multi-document YAML stream into objects; empty documents are dropped, errors thrown. */
export function parseObjects(yamlText: string): K8sObject[] {
  // yaml is a dev dependency of the test package (one lockfile shared by parallel work).
  const yaml = createRequire(new URL("../../test/package.json", import.meta.url))("yaml") as YamlModule;
  const out: K8sObject[] = [];
  for (const doc of yaml.parseAllDocuments(yamlText)) {
    if (doc.errors.length > 0) throw new Error(`invalid YAML: ${doc.errors[0].message}`);
    const obj = doc.toJS() as K8sObject | null;
    if (!obj) continue;
    if (!obj.kind || !obj.metadata?.name)
      throw new Error(`an object without kind or metadata.name: ${JSON.stringify(obj)}`);
    out.push(obj);
  }
  return out;
}
