// The pure half of the podman adapter: rendered Kubernetes objects → the pods to play, each
// container as the argv of one `podman run`. Nothing here runs a command, so every rule is unit
// tested (translate.test.ts). What Kubernetes would do and podman cannot is listed as a problem
// instead of being approximated silently; the player refuses to start with problems.
import type {
  Container,
  DataObject,
  EnvVar,
  K8sObject,
  PodSpec,
  Probe,
  SecurityContext,
  Service,
  Volume,
  Workload,
} from "./manifests.js";

/** Names and places of one run; everything the run creates carries `prefix` and the label. */
export interface RunNames {
  /** Unique id of the run (label value). */
  id: string;
  /** Prefix of every container and volume name, e.g. `redline-smoke-1a2b`. */
  prefix: string;
  /** The run's podman network. */
  network: string;
  /** Its subnet as podman reports it, e.g. `10.89.3.0/24`; pods get fixed addresses from it. */
  subnet: string;
  /** Host directory holding the files of configMap and secret volumes. */
  filesDir: string;
}

/** Label on everything a run creates: `io.redline.smoke.run=<id>`. */
export const RUN_LABEL = "io.redline.smoke.run";

export type Phase = "stateful" | "job" | "workload";

/** A probe with Kubernetes' defaults filled in and named ports resolved; times in ms. */
export interface PlannedProbe {
  action:
    | { type: "http"; port: number; path: string; scheme: string; headers: Record<string, string> }
    | { type: "grpc"; port: number; service: string }
    | { type: "tcp"; port: number }
    | { type: "exec"; command: string[] };
  initialDelayMs: number;
  periodMs: number;
  timeoutMs: number;
  successThreshold: number;
  failureThreshold: number;
}

export interface PlannedContainer {
  /** The podman container name. */
  name: string;
  /** The container's name in the manifest. */
  k8sName: string;
  image: string;
  /** Arguments of `podman` (starting with `run`). */
  argv: string[];
  /** The container's whole environment as Kubernetes resolves it. */
  env: Record<string, string>;
  /** The part of `env` that came from Secrets: passed through podman's own environment, never argv. */
  secretEnv: Record<string, string>;
  /** runAsNonRoot without runAsUser: the player checks the image's user. */
  requireNonRootImage: boolean;
  probes: { startup?: PlannedProbe; readiness?: PlannedProbe; liveness?: PlannedProbe };
}

export interface PlannedPod {
  /** Pod name as Kubernetes would give it (`gateway-1`, `postgres-0`, `migrate-documents`). */
  name: string;
  kind: string;
  workload: string;
  phase: Phase;
  /** The pod's fixed address on the run's network. */
  ip: string;
  /** DNS names on the run's network: the Services selecting it (and `<pod>.<service>` for StatefulSets). */
  aliases: string[];
  /** The Services selecting it, with their ports. */
  services: { name: string; ports: number[] }[];
  /** Run one after another to completion before `containers`. */
  init: PlannedContainer[];
  containers: PlannedContainer[];
  /** Files of configMap/secret volumes, written under RunNames.filesDir before the pod starts. */
  files: { path: string; content: string; mode: number }[];
  /** Named volumes (PVCs, shared emptyDirs) to create first. */
  volumes: string[];
  /** Jobs: attempts after the first failure (spec.backoffLimit, default 6). */
  retries: number;
  /** Jobs: spec.activeDeadlineSeconds in ms, when set. */
  activeDeadlineMs?: number;
}

export interface Plan {
  pods: PlannedPod[];
  /** Objects the adapter does not play (kind/name: why). */
  notes: string[];
  /** Everything Kubernetes would run that this adapter cannot play faithfully. */
  problems: string[];
}

const PLAYED = new Set(["Deployment", "StatefulSet", "Job", "Pod"]);
const READ = new Set(["ConfigMap", "Secret", "Service", "PersistentVolumeClaim"]);
const PHASE: Record<string, Phase> = { StatefulSet: "stateful", Job: "job", Deployment: "workload", Pod: "workload" };

/** Plans a run of `objects`: one PlannedPod per replica, in phase order (stateful, job, workload). */
export function planRun(objects: K8sObject[], names: RunNames): Plan {
  const problems: string[] = [];
  const notes: string[] = [];
  const configMaps = dataOf(objects, "ConfigMap", false);
  const secrets = dataOf(objects, "Secret", true);
  const services = objects.filter((o): o is Service => o.kind === "Service");
  const claims = new Set(objects.filter((o) => o.kind === "PersistentVolumeClaim").map((o) => o.metadata.name));
  const skipped = new Map<string, number>();
  for (const o of objects)
    if (!PLAYED.has(o.kind) && !READ.has(o.kind)) skipped.set(o.kind, (skipped.get(o.kind) ?? 0) + 1);
  for (const [kind, n] of skipped) notes.push(`${kind} ×${n}: not played (no podman counterpart)`);

  const workloads = objects
    .filter((o): o is Workload => PLAYED.has(o.kind))
    .sort((a, b) => order(PHASE[a.kind]) - order(PHASE[b.kind]));
  const ips = addresses(names.subnet);
  const pods: PlannedPod[] = [];
  for (const w of workloads) {
    const spec = w.kind === "Pod" ? (w.spec as unknown as PodSpec) : w.spec.template?.spec;
    const labels = (w.kind === "Pod" ? w.metadata.labels : w.spec.template?.metadata?.labels) ?? {};
    if (!spec?.containers?.length) {
      problems.push(`${w.kind}/${w.metadata.name}: no containers`);
      continue;
    }
    const replicas = w.kind === "Deployment" || w.kind === "StatefulSet" ? (w.spec.replicas ?? 1) : 1;
    const selecting = services.filter((s) => selects(s, labels));
    for (const s of selecting) problems.push(...portProblems(s, spec.containers));
    for (let i = 0; i < replicas; i++) {
      const podName = w.kind === "Deployment" || w.kind === "StatefulSet" ? `${w.metadata.name}-${i}` : w.metadata.name;
      const ip = ips.next().value;
      if (!ip) {
        problems.push(`subnet ${names.subnet} has no address left for ${podName}`);
        continue;
      }
      const aliases = selecting.map((s) => s.metadata.name);
      if (w.kind === "StatefulSet" && w.spec.serviceName) aliases.push(`${podName}.${w.spec.serviceName}`);
      const ctx: PodContext = {
        names,
        w,
        spec,
        podName,
        ip,
        labels,
        configMaps,
        secrets,
        claims,
        problems,
        claimTemplates: new Set((w.spec.volumeClaimTemplates ?? []).map((t) => t.metadata.name)),
      };
      const { files, volumes, mounts } = planVolumes(ctx);
      const containerName = (c: Container, init: boolean) =>
        init
          ? `${names.prefix}-${podName}-init-${c.name}`
          : c === spec.containers[0]
            ? `${names.prefix}-${podName}`
            : `${names.prefix}-${podName}-${c.name}`;
      const restart = w.kind === "Job" ? "no" : (spec.restartPolicy ?? "Always") === "Always" ? "always" : "no";
      const first = containerName(spec.containers[0], false);
      pods.push({
        name: podName,
        kind: w.kind,
        workload: w.metadata.name,
        phase: PHASE[w.kind],
        ip,
        aliases,
        services: selecting.map((s) => ({ name: s.metadata.name, ports: (s.spec.ports ?? []).map((p) => p.port) })),
        init: (spec.initContainers ?? []).map((c) =>
          planContainer(ctx, c, containerName(c, true), mounts, {
            network: `${names.network}:ip=${ip}`,
            restart: "no",
          }),
        ),
        containers: spec.containers.map((c, n) =>
          planContainer(ctx, c, containerName(c, false), mounts, {
            network: n === 0 ? networkOption(names.network, ip, aliases) : `container:${first}`,
            restart,
          }),
        ),
        files,
        volumes,
        retries: w.kind === "Job" ? (w.spec.backoffLimit ?? 6) : 0,
        activeDeadlineMs:
          w.kind === "Job" && w.spec.activeDeadlineSeconds ? w.spec.activeDeadlineSeconds * 1000 : undefined,
      });
    }
  }
  return { pods, notes, problems };
}

function order(phase: Phase): number {
  return phase === "stateful" ? 0 : phase === "job" ? 1 : 2;
}

/** `net:ip=…,alias=a,alias=b`: the pod's fixed address and its DNS names. */
export function networkOption(network: string, ip: string, aliases: string[]): string {
  return [`${network}:ip=${ip}`, ...aliases.map((a) => `alias=${a}`)].join(",");
}

/** Host addresses of an IPv4 subnet (prefix 8..24), from .10 on (podman's gateway is .1). */
export function* addresses(subnet: string): Generator<string, undefined> {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(subnet);
  if (!m) return undefined;
  const prefix = Number(m[5]);
  if (prefix < 8 || prefix > 24) return undefined;
  const base = ((Number(m[1]) << 24) | (Number(m[2]) << 16) | (Number(m[3]) << 8) | Number(m[4])) >>> 0;
  const size = 2 ** (32 - prefix);
  for (let n = 10; n < size - 1; n++) {
    const a = (base + n) >>> 0;
    yield [a >>> 24, (a >>> 16) & 255, (a >>> 8) & 255, a & 255].join(".");
  }
  return undefined;
}

/** A Service selects a pod when every selector label matches (a Service without selector selects none). */
export function selects(service: Service, labels: Record<string, string>): boolean {
  const selector = service.spec?.selector;
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** A DNS alias cannot remap ports: each Service port must equal the container port it targets. */
function portProblems(service: Service, containers: Container[]): string[] {
  const out: string[] = [];
  for (const p of service.spec.ports ?? []) {
    const target = p.targetPort ?? p.port;
    const resolved = typeof target === "number" ? target : namedPort(containers, target);
    if (resolved === undefined)
      out.push(`Service/${service.metadata.name}: targetPort "${target}" names no container port`);
    else if (resolved !== p.port)
      out.push(
        `Service/${service.metadata.name}: port ${p.port} → targetPort ${resolved} (a DNS alias cannot remap ports)`,
      );
  }
  return out;
}

function namedPort(containers: Container[], name: string): number | undefined {
  for (const c of containers) for (const p of c.ports ?? []) if (p.name === name) return p.containerPort;
  if (/^\d+$/.test(name)) return Number(name);
  return undefined;
}

/** name → decoded data of every ConfigMap or Secret (Secret `data` is base64, `stringData` plain). */
function dataOf(objects: K8sObject[], kind: string, base64: boolean): Map<string, Record<string, string>> {
  const out = new Map<string, Record<string, string>>();
  for (const o of objects as DataObject[]) {
    if (o.kind !== kind) continue;
    const data: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.data ?? {}))
      data[k] = base64 ? Buffer.from(String(v), "base64").toString("utf8") : String(v);
    for (const [k, v] of Object.entries(o.stringData ?? {})) data[k] = String(v);
    out.set(o.metadata.name, data);
  }
  return out;
}

interface PodContext {
  names: RunNames;
  w: Workload;
  spec: PodSpec;
  podName: string;
  ip: string;
  labels: Record<string, string>;
  configMaps: Map<string, Record<string, string>>;
  secrets: Map<string, Record<string, string>>;
  claims: Set<string>;
  claimTemplates: Set<string>;
  problems: string[];
}

/** How one pod volume is mounted into a container: the podman option for a mount path. */
type Mounter = (mountPath: string, subPath: string | undefined, readOnly: boolean, user: boolean) => string[];

/**
 * The pod's volumes: files for configMap/secret volumes, named volumes for PVCs (claim templates
 * per StatefulSet replica) and for emptyDirs shared by several containers; an emptyDir used by one
 * container is a tmpfs, world-writable like a Kubernetes emptyDir.
 */
function planVolumes(ctx: PodContext): {
  files: PlannedPod["files"];
  volumes: string[];
  mounts: Map<string, Mounter>;
} {
  const { names, podName, spec } = ctx;
  const files: PlannedPod["files"] = [];
  const volumes: string[] = [];
  const mounts = new Map<string, Mounter>();
  const all = [...(spec.initContainers ?? []), ...spec.containers];
  const users = (v: string) => all.filter((c) => (c.volumeMounts ?? []).some((m) => m.name === v)).length;
  const named = (volume: string): Mounter => {
    if (!volumes.includes(volume)) volumes.push(volume);
    return (path, subPath, ro, user) => {
      if (subPath) ctx.problems.push(`${podName}: subPath on a volume other than configMap/secret is not supported`);
      const opts = [ro ? "ro" : "", user ? "U" : ""].filter(Boolean).join(",");
      return ["-v", `${volume}:${path}${opts ? `:${opts}` : ""}`];
    };
  };
  // Claim templates are mounted by template name, like a pod volume of that name.
  for (const t of ctx.claimTemplates) mounts.set(t, named(`${names.prefix}-${t}-${podName}`));
  for (const v of spec.volumes ?? []) mounts.set(v.name, planVolume(ctx, v, users(v.name), files, named));
  return { files, volumes, mounts };
}

function planVolume(
  ctx: PodContext,
  v: Volume,
  users: number,
  files: PlannedPod["files"],
  named: (volume: string) => Mounter,
): Mounter {
  const { names, podName } = ctx;
  if (v.emptyDir) {
    if (users > 1) return named(`${names.prefix}-${podName}-${v.name}`);
    let size = "";
    try {
      if (v.emptyDir.sizeLimit) size = `,tmpfs-size=${bytes(v.emptyDir.sizeLimit)}`;
    } catch (err) {
      ctx.problems.push(`${podName}: volume "${v.name}": ${(err as Error).message}`);
    }
    return (path) => ["--mount", `type=tmpfs,destination=${path},tmpfs-mode=1777${size}`];
  }
  if (v.persistentVolumeClaim) {
    const claim = v.persistentVolumeClaim.claimName;
    if (!ctx.claims.has(claim))
      ctx.problems.push(`${podName}: PersistentVolumeClaim "${claim}" is not in the manifests`);
    return named(`${names.prefix}-${claim}`);
  }
  const source = v.configMap
    ? { ...v.configMap, kind: "ConfigMap", data: ctx.configMaps.get(v.configMap.name) }
    : v.secret
      ? { ...v.secret, kind: "Secret", name: v.secret.secretName, data: ctx.secrets.get(v.secret.secretName) }
      : undefined;
  if (source) {
    const dir = `${names.filesDir}/${podName}/${v.name}`;
    if (!source.data && !source.optional)
      ctx.problems.push(`${podName}: ${source.kind} "${source.name}" is not in the manifests`);
    const items = source.items ?? Object.keys(source.data ?? {}).map((key) => ({ key, path: key }));
    for (const item of items) {
      const content = source.data?.[item.key];
      if (content === undefined)
        ctx.problems.push(`${podName}: ${source.kind} "${source.name}" has no key "${item.key}"`);
      else files.push({ path: `${dir}/${item.path}`, content, mode: source.defaultMode ?? 0o644 });
    }
    return (path, subPath) => ["-v", `${subPath ? `${dir}/${subPath}` : dir}:${path}:ro`];
  }
  const type = Object.keys(v).find((k) => k !== "name") ?? "unknown";
  ctx.problems.push(`${podName}: volume "${v.name}" of type ${type} is not supported by the smoke adapter`);
  return () => [];
}

/** `podman run` for one container: identity, network, security, resources, env, volumes, command. */
function planContainer(
  ctx: PodContext,
  c: Container,
  name: string,
  mounts: Map<string, Mounter>,
  opts: { network: string; restart: string },
): PlannedContainer {
  const { names, podName, spec } = ctx;
  const sc: SecurityContext = { ...spec.securityContext, ...c.securityContext };
  const { env, secretEnv } = resolveEnv(ctx, c);
  const argv = ["run", "-d", "--name", name, "--label", `${RUN_LABEL}=${names.id}`];
  argv.push("--label", `io.redline.smoke.pod=${podName}`, "--pull=never", `--restart=${opts.restart}`);
  argv.push("--network", opts.network);
  if (!opts.network.startsWith("container:")) argv.push("--hostname", podName);
  if (spec.terminationGracePeriodSeconds !== undefined)
    argv.push(`--stop-timeout=${spec.terminationGracePeriodSeconds}`);

  if (sc.runAsUser !== undefined)
    argv.push("--user", `${sc.runAsUser}${sc.runAsGroup !== undefined ? `:${sc.runAsGroup}` : ""}`);
  if (sc.runAsNonRoot && sc.runAsUser === 0) ctx.problems.push(`${podName}/${c.name}: runAsNonRoot with runAsUser 0`);
  for (const g of [spec.securityContext?.fsGroup, ...(spec.securityContext?.supplementalGroups ?? [])])
    if (g !== undefined) argv.push("--group-add", String(g));
  if (sc.readOnlyRootFilesystem) argv.push("--read-only", "--read-only-tmpfs=false");
  if (sc.allowPrivilegeEscalation === false) argv.push("--security-opt=no-new-privileges");
  if (sc.privileged) argv.push("--privileged");
  for (const cap of sc.capabilities?.drop ?? []) argv.push(`--cap-drop=${cap.toLowerCase()}`);
  for (const cap of sc.capabilities?.add ?? []) argv.push(`--cap-add=${cap.toLowerCase()}`);
  if (sc.seccompProfile?.type === "Unconfined") argv.push("--security-opt=seccomp=unconfined");

  const limits = c.resources?.limits ?? {};
  try {
    if (limits.memory !== undefined) argv.push(`--memory=${bytes(String(limits.memory))}`);
    if (limits.cpu !== undefined) argv.push(`--cpus=${cpus(String(limits.cpu))}`);
  } catch (err) {
    ctx.problems.push(`${podName}/${c.name}: ${(err as Error).message}`);
  }

  for (const [k, v] of Object.entries(env)) argv.push("--env", k in secretEnv ? k : `${k}=${v}`);
  // Volumes owned by the container's user when the pod asks for it (fsGroup), as Kubernetes does.
  const own = spec.securityContext?.fsGroup !== undefined;
  for (const m of c.volumeMounts ?? []) {
    const mount = mounts.get(m.name);
    if (!mount) ctx.problems.push(`${podName}/${c.name}: volumeMount "${m.name}" names no volume`);
    else argv.push(...mount(m.mountPath, m.subPath, m.readOnly ?? false, own));
  }
  if (c.workingDir) argv.push("--workdir", c.workingDir);
  if (c.command) argv.push(`--entrypoint=${JSON.stringify(c.command.map((a) => expand(a, env).value))}`);
  argv.push(c.image, ...(c.args ?? []).map((a) => expand(a, env).value));

  const probe = (p: Probe | undefined) => (p ? planProbe(p, c, `${podName}/${c.name}`, ctx.problems) : undefined);
  return {
    name,
    k8sName: c.name,
    image: c.image,
    argv,
    env,
    secretEnv,
    requireNonRootImage: sc.runAsNonRoot === true && sc.runAsUser === undefined,
    probes: { startup: probe(c.startupProbe), readiness: probe(c.readinessProbe), liveness: probe(c.livenessProbe) },
  };
}

/**
 * The container's environment as Kubernetes builds it: `envFrom` sources in order, then `env`
 * (later wins); `$(VAR)` in values expands from what is defined before (`$$` escapes).
 */
function resolveEnv(ctx: PodContext, c: Container): { env: Record<string, string>; secretEnv: Record<string, string> } {
  const where = `${ctx.podName}/${c.name}`;
  const env: Record<string, string> = {};
  const secret = new Set<string>();
  const set = (k: string, v: string, isSecret: boolean) => {
    env[k] = v;
    if (isSecret) secret.add(k);
    else secret.delete(k);
  };
  for (const from of c.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) continue;
    const isSecret = !!from.secretRef;
    const data = (isSecret ? ctx.secrets : ctx.configMaps).get(ref.name);
    if (!data) {
      if (!ref.optional)
        ctx.problems.push(
          `${where}: envFrom ${isSecret ? "Secret" : "ConfigMap"} "${ref.name}" is not in the manifests`,
        );
      continue;
    }
    for (const [k, v] of Object.entries(data))
      if (/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(k)) set(`${from.prefix ?? ""}${k}`, v, isSecret);
  }
  for (const e of c.env ?? []) {
    const v = envValue(ctx, e, where);
    if (v === undefined) continue;
    if (e.valueFrom) set(e.name, v.value, v.secret);
    else {
      const x = expand(v.value, env);
      set(
        e.name,
        x.value,
        x.refs.some((r) => secret.has(r)),
      );
    }
  }
  const secretEnv = Object.fromEntries([...secret].map((k) => [k, env[k]]));
  return { env, secretEnv };
}

function envValue(ctx: PodContext, e: EnvVar, where: string): { value: string; secret: boolean } | undefined {
  if (!e.valueFrom) return { value: e.value ?? "", secret: false };
  const { configMapKeyRef: cm, secretKeyRef: sk, fieldRef } = e.valueFrom;
  const ref = cm ?? sk;
  if (ref) {
    const value = (sk ? ctx.secrets : ctx.configMaps).get(ref.name)?.[ref.key];
    if (value === undefined && !ref.optional)
      ctx.problems.push(
        `${where}: env ${e.name} refers to ${sk ? "Secret" : "ConfigMap"} "${ref.name}" key "${ref.key}", which is not in the manifests`,
      );
    return value === undefined ? undefined : { value, secret: !!sk };
  }
  if (fieldRef) {
    const path = fieldRef.fieldPath;
    const label = /^metadata\.labels\['(.+)'\]$/.exec(path);
    const value =
      path === "metadata.name"
        ? ctx.podName
        : path === "metadata.namespace"
          ? (ctx.w.metadata.namespace ?? "default")
          : path === "status.podIP"
            ? ctx.ip
            : path === "spec.nodeName"
              ? "podman"
              : label
                ? ctx.labels[label[1]]
                : undefined;
    if (value === undefined) ctx.problems.push(`${where}: env ${e.name} fieldRef ${path} is not supported`);
    return value === undefined ? undefined : { value, secret: false };
  }
  ctx.problems.push(`${where}: env ${e.name}: this valueFrom is not supported`);
  return undefined;
}

/** Kubernetes' `$(VAR)` expansion from `env`; unknown references stay as written, `$$(X)` gives `$(X)`. */
export function expand(text: string, env: Record<string, string>): { value: string; refs: string[] } {
  const refs: string[] = [];
  const value = text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (whole, name: string | undefined) => {
    if (!name) return "$";
    if (!(name in env)) return whole;
    refs.push(name);
    return env[name];
  });
  return { value, refs };
}

function planProbe(p: Probe, c: Container, where: string, problems: string[]): PlannedProbe | undefined {
  const port = (value: number | string) => (typeof value === "number" ? value : namedPort([c], value));
  let action: PlannedProbe["action"] | undefined;
  if (p.httpGet) {
    const n = port(p.httpGet.port);
    if (p.httpGet.host) problems.push(`${where}: httpGet.host is not followed (probes go to the pod's address only)`);
    if (n !== undefined)
      action = {
        type: "http",
        port: n,
        path: p.httpGet.path ?? "/",
        scheme: (p.httpGet.scheme ?? "HTTP").toLowerCase(),
        headers: Object.fromEntries((p.httpGet.httpHeaders ?? []).map((h) => [h.name, h.value])),
      };
  } else if (p.grpc) action = { type: "grpc", port: p.grpc.port, service: p.grpc.service ?? "" };
  else if (p.tcpSocket) {
    const n = port(p.tcpSocket.port);
    if (n !== undefined) action = { type: "tcp", port: n };
  } else if (p.exec) action = { type: "exec", command: p.exec.command };
  if (!action) {
    problems.push(`${where}: a probe without a handler the adapter can run (or its named port is unknown)`);
    return undefined;
  }
  return {
    action,
    initialDelayMs: (p.initialDelaySeconds ?? 0) * 1000,
    periodMs: (p.periodSeconds ?? 10) * 1000,
    timeoutMs: (p.timeoutSeconds ?? 1) * 1000,
    successThreshold: p.successThreshold ?? 1,
    failureThreshold: p.failureThreshold ?? 3,
  };
}

const UNITS: Record<string, number> = {
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

/** A Kubernetes memory quantity (`256Mi`, `1G`, `1048576`) in bytes. */
export function bytes(quantity: string): number {
  const m = /^([0-9.]+)([kMGT]i?|Ki)?$/.exec(quantity.trim());
  if (!m) throw new Error(`not a memory quantity: ${quantity}`);
  return Math.round(Number(m[1]) * UNITS[m[2] ?? ""]);
}

/** A Kubernetes CPU quantity (`500m`, `2`, `0.5`) in cores. */
export function cpus(quantity: string): number {
  const q = quantity.trim();
  const n = q.endsWith("m") ? Number(q.slice(0, -1)) / 1000 : Number(q);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`not a CPU quantity: ${quantity}`);
  return n;
}
