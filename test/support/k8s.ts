// Rendered Kubernetes manifests for test/k8s-manifests.test.ts: rendering an overlay with
// `kubectl kustomize`, label selectors, the environment a container is given, and which variables
// a service's loadConfig reads.
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

export type Labels = Record<string, string>;

/** The parts of an object the checks read; kubernetes-models validates the whole of it. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Labels; annotations?: Labels };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

export interface LabelSelector {
  matchLabels?: Labels;
  matchExpressions?: { key: string; operator: "In" | "NotIn" | "Exists" | "DoesNotExist"; values?: string[] }[];
}

interface KeyRef {
  name: string;
  key: string;
  optional?: boolean;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { configMapKeyRef?: KeyRef; secretKeyRef?: KeyRef };
}

export interface Container {
  name: string;
  image?: string;
  args?: string[];
  ports?: { containerPort: number; name?: string; hostPort?: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string; optional?: boolean }; secretRef?: { name: string; optional?: boolean } }[];
  livenessProbe?: unknown;
  readinessProbe?: unknown;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: SecurityContext;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}

export interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[] };
  seccompProfile?: { type?: string };
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: SecurityContext;
  serviceAccountName?: string;
  hostNetwork?: boolean;
  terminationGracePeriodSeconds?: number;
  volumes?: { name: string; emptyDir?: unknown }[];
}

/** A Deployment, StatefulSet or Job with its pod template. */
export interface Workload {
  kind: string;
  name: string;
  replicas?: number;
  labels: Labels;
  pod: PodSpec;
}

/** The kubectl binary, or null when it is not installed. */
export function findKubectl(): string | null {
  const probe = spawnSync("kubectl", ["version", "--client"], { encoding: "utf8" });
  return probe.error ? null : "kubectl";
}

/** Every object `kubectl kustomize <dir>` renders; throws on a YAML error. */
export function renderOverlay(kubectl: string, dir: string): K8sObject[] {
  const out = execFileSync(kubectl, ["kustomize", dir], { encoding: "utf8", maxBuffer: 32 * 1024 * 1024 });
  return parseAllDocuments(out).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`${dir}: ${doc.errors.map((e) => e.message).join("; ")}`);
    const obj = doc.toJS() as K8sObject | null;
    return obj ? [obj] : [];
  });
}

/** The pod-bearing objects of a rendered overlay. */
export function workloads(objects: K8sObject[]): Workload[] {
  return objects
    .filter((o) => ["Deployment", "StatefulSet", "Job"].includes(o.kind))
    .map((o) => {
      const spec = o.spec as { replicas?: number; template: { metadata?: { labels?: Labels }; spec: PodSpec } };
      return {
        kind: o.kind,
        name: o.metadata.name,
        replicas: spec.replicas,
        labels: spec.template.metadata?.labels ?? {},
        pod: spec.template.spec,
      };
    });
}

/** Whether `labels` satisfy a LabelSelector; an empty selector matches everything. */
export function selects(selector: LabelSelector, labels: Labels): boolean {
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpressions = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    switch (operator) {
      case "In":
        return key in labels && values.includes(labels[key]);
      case "NotIn":
        return !(key in labels) || !values.includes(labels[key]);
      case "Exists":
        return key in labels;
      case "DoesNotExist":
        return !(key in labels);
    }
    return false;
  });
  return byLabels && byExpressions;
}

/** A variable as a container receives it: its value, or undefined when it comes from an absent object. */
export interface ProvidedVar {
  value: string | undefined;
  /** optional: true on its reference (may be missing at runtime). */
  optional: boolean;
  /** Where it comes from, for messages. */
  source: string;
}

/** Where an env reference points, checked separately from the variable itself. */
export interface EnvRef {
  kind: "ConfigMap" | "Secret";
  name: string;
  key?: string;
  optional: boolean;
  variable: string;
}

/** Data of a ConfigMap or Secret (stringData wins, data decoded from base64). */
export function objectData(obj: K8sObject): Record<string, string> {
  const decoded = Object.fromEntries(
    Object.entries(obj.data ?? {}).map(([k, v]) => [
      k,
      obj.kind === "Secret" ? Buffer.from(v, "base64").toString() : v,
    ]),
  );
  return { ...decoded, ...obj.stringData };
}

/**
 * The environment a container is given, resolved against the ConfigMaps and Secrets of the same
 * overlay (`env` entries override `envFrom`, as in Kubernetes), and every reference it makes.
 */
export function containerEnv(
  container: Container,
  objects: K8sObject[],
): { vars: Map<string, ProvidedVar>; refs: EnvRef[] } {
  const find = (kind: "ConfigMap" | "Secret", name: string) =>
    objects.find((o) => o.kind === kind && o.metadata.name === name);
  const vars = new Map<string, ProvidedVar>();
  const refs: EnvRef[] = [];
  for (const from of container.envFrom ?? []) {
    const [kind, ref] = from.configMapRef
      ? (["ConfigMap", from.configMapRef] as const)
      : (["Secret", from.secretRef as { name: string; optional?: boolean }] as const);
    refs.push({ kind, name: ref.name, optional: ref.optional ?? false, variable: `envFrom ${kind} ${ref.name}` });
    const obj = find(kind, ref.name);
    for (const [k, v] of Object.entries(obj ? objectData(obj) : {}))
      vars.set(k, { value: v, optional: ref.optional ?? false, source: `${kind} ${ref.name}` });
  }
  for (const e of container.env ?? []) {
    const keyRef = e.valueFrom?.configMapKeyRef ?? e.valueFrom?.secretKeyRef;
    if (!keyRef) {
      vars.set(e.name, { value: e.value ?? "", optional: false, source: "env value" });
      continue;
    }
    const kind = e.valueFrom?.configMapKeyRef ? "ConfigMap" : "Secret";
    const optional = keyRef.optional ?? false;
    refs.push({ kind, name: keyRef.name, key: keyRef.key, optional, variable: e.name });
    const obj = find(kind, keyRef.name);
    const value = obj ? objectData(obj)[keyRef.key] : undefined;
    if (obj && value === undefined && optional) continue; // absent optional key: the variable is unset
    vars.set(e.name, { value, optional, source: `${kind} ${keyRef.name} key ${keyRef.key}` });
  }
  return { vars, refs };
}

type Env = Record<string, string | undefined>;

/** What a service's loadConfig reads from its environment. */
export interface ConfigEnvUse {
  /** Every variable it looked at, on any branch the probes took. */
  reads: Set<string>;
  /** Variables whose absence makes it throw. */
  required: Set<string>;
}

/**
 * Values tried, in order, for a variable whose sample loadConfig refuses. The large number is for
 * bounds relative to another variable's sample (SYNC_HOLD_EXPIRY_MS must exceed AI_TIMEOUT_MS);
 * "all" is one of the words an enumerated variable takes (TRACE_RPC_CLIENT_SPANS: errors or all),
 * "free" a plan name (NEW_ORGANIZATION_PLAN), "auto" and "keep" modes (OPENAI_TOOL_MODE,
 * REMOTE_IMAGES), and the last an OTEL_TRACES_SAMPLER that reads its OTEL_TRACES_SAMPLER_ARG.
 */
const ALTERNATE_SAMPLES = [
  "on",
  "off",
  "true",
  "all",
  "127.0.0.1:1",
  "http://127.0.0.1:1",
  "3600000",
  "free",
  "auto",
  "keep",
  "parentbased_traceidratio",
];

/**
 * Runs `loadConfig` against recording Proxy environments, so the answer comes from the config
 * code itself (service-kit helpers such as readAddrs and readInfraEnv included) rather than from
 * a list kept by hand. First every variable it asks for is set (to `sample(name)`), which walks
 * the branches taken when things are configured; then each variable seen is removed in turn:
 * a throw means it is required, and the fallback branches taken add their reads. Repeats until
 * no new variable appears. Blind spot: a config that enumerates the environment (Object.keys)
 * sees an empty one.
 */
export function probeConfig(loadConfig: (env: Env) => unknown, sample: (name: string) => string): ConfigEnvUse {
  const reads = new Set<string>();
  // A variable whose sample the config refuses (an on/off switch, an address) gets the first
  // of these it accepts.
  const chosen = new Map<string, string>();
  const run = (omit: string | null): unknown => {
    const env = new Proxy({} as Env, {
      get: (_target, key) => {
        if (typeof key !== "string") return undefined;
        reads.add(key);
        return key === omit ? undefined : (chosen.get(key) ?? sample(key));
      },
      has: (_target, key) => {
        if (typeof key === "string") reads.add(key);
        return key !== omit;
      },
    });
    try {
      loadConfig(env);
      return null;
    } catch (err) {
      return err;
    }
  };
  // Fix the variables the refusal names, one at a time: a value is kept once the refusal no longer
  // names its variable, since the next refusal may come from a variable read only after it.
  let full = run(null);
  const fixed = new Set<string>();
  const names = (err: unknown, name: string) => new RegExp(`\\b${name}\\b`).test(String(err));
  for (let name = nextNamed(); full && name; name = nextNamed()) {
    fixed.add(name);
    for (const value of ALTERNATE_SAMPLES) {
      chosen.set(name, value);
      const next = run(null);
      if (!next || !names(next, name)) {
        full = next;
        break;
      }
    }
    if (names(full, name)) chosen.delete(name);
  }
  function nextNamed(): string | undefined {
    return [...reads].find((n) => !fixed.has(n) && names(full, n));
  }
  if (full) throw new Error(`loadConfig rejected an environment with every variable set: ${String(full)}`);
  const required = new Set<string>();
  const tried = new Set<string>();
  for (let pending = [...reads]; pending.length > 0; pending = [...reads].filter((n) => !tried.has(n))) {
    for (const name of pending) {
      tried.add(name);
      if (run(name)) required.add(name);
    }
  }
  return { reads, required };
}

/**
 * The services each service calls, read from its context.ts: every `[...] as const` list of names
 * there (CLIENTS handed to createClients, the gateway's SERVICE_NAMES health clients), each name
 * mapped to the service serving it through service-kit's SERVICE_CLIENTS, or taken as is when it
 * is a service name. A context that creates clients without such a list fails loudly.
 */
export function callees(contextFile: string, clientService: Record<string, string>, services: string[]): Set<string> {
  const source = readFileSync(contextFile, "utf8");
  const lists = [...source.matchAll(/=\s*\[([^\]]*)\]\s*as const/g)].map((m) =>
    [...m[1].matchAll(/"([^"]+)"/g)].map((s) => s[1]),
  );
  if (/createClients\(|createRpcClient\(/.test(source) && lists.length === 0)
    throw new Error(`${contextFile} creates gRPC clients but names them in no \`[...] as const\` list`);
  const out = new Set<string>();
  for (const name of lists.flat()) {
    const service = clientService[name] ?? (services.includes(name) ? name : undefined);
    if (!service) throw new Error(`${contextFile}: "${name}" is neither a SERVICE_CLIENTS name nor a service`);
    out.add(service);
  }
  return out;
}
