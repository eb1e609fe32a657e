// deploy/k8s, offline: every overlay is rendered with `kubectl kustomize`, each object validated
// with kubernetes-models, and the objects checked against each other and against the services'
// own code: the variables each config reads (loadConfig, probed), the services each context calls
// (context.ts), which migrations exist. No API server is needed (or available) here.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CHAT_DEADLINE_GRACE_MS, type GatewayConfig } from "@redline/gateway";
import { SERVICE_CLIENTS } from "@redline/service-kit";
import { Deployment, StatefulSet } from "kubernetes-models/apps/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { Job } from "kubernetes-models/batch/v1";
import { Ingress, NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ConfigMap, Secret, Service, ServiceAccount } from "kubernetes-models/v1";
import { beforeAll, describe, expect, it } from "vitest";
import {
  type ConfigEnvUse,
  type Container,
  callees,
  containerEnv,
  findKubectl,
  type K8sObject,
  type LabelSelector,
  type Labels,
  objectData,
  probeConfig,
  renderOverlay,
  selects,
  type Workload,
  workloads,
} from "./support/k8s.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const K8S = join(ROOT, "deploy/k8s");
const README = readFileSync(join(K8S, "README.md"), "utf8");
const OVERLAYS = readdirSync(join(K8S, "overlays")).sort();

/** Read by the runtime, not by config: HOME=/tmp gives Node and Chromium a writable home. */
const RUNTIME_ENV = new Set(["HOME"]);

/** Every object kind the overlays may hold, with its kubernetes-models class. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  "v1/ConfigMap": ConfigMap,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "v1/ServiceAccount": ServiceAccount,
  "apps/v1/Deployment": Deployment,
  "apps/v1/StatefulSet": StatefulSet,
  "batch/v1/Job": Job,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "networking.k8s.io/v1/Ingress": Ingress,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
};

type Env = Record<string, string | undefined>;

/** The port every server pod serves GET /metrics on (METRICS_ADDR in each ConfigMap). */
const METRICS_PORT = 9464;
type LoadConfig = (env: Env) => unknown;

/** The services: every services/<name> with a config.ts; its pods carry app.kubernetes.io/name=<name>. */
const SERVICES = readdirSync(join(ROOT, "services"))
  .filter((d) => existsSync(join(ROOT, "services", d, "src/config.ts")))
  .sort();
const hasSchema = (svc: string) => existsSync(join(ROOT, "services", svc, "src/db/migrations.ts"));
const LOADERS = new Map<string, LoadConfig>();
for (const svc of SERVICES) {
  const mod = (await import(pathToFileURL(join(ROOT, "services", svc, "src/config.ts")).href)) as {
    loadConfig?: LoadConfig;
  };
  if (!mod.loadConfig) throw new Error(`services/${svc}/src/config.ts exports no loadConfig`);
  LOADERS.set(svc, mod.loadConfig);
}
/**
 * What each config reads and requires, probed with every variable set to "1" (valid for each
 * number the configs parse; strings are not checked). Derived from the code, not from the
 * manifests, so a bad value in an overlay cannot hide a variable.
 */
const ENV_USE = new Map([...LOADERS].map(([svc, load]) => [svc, probeConfig(load, () => "1")]));

/** Who calls whom, from each context.ts (see callees): service → the services it calls. */
const CLIENT_SERVICE = Object.fromEntries(Object.entries(SERVICE_CLIENTS).map(([name, [, svc]]) => [name, svc]));
const CALLS = new Map(
  SERVICES.map((svc) => [svc, callees(join(ROOT, "services", svc, "src/context.ts"), CLIENT_SERVICE, SERVICES)]),
);
const callersOf = (svc: string) => SERVICES.filter((s) => CALLS.get(s)?.has(svc));

const KUBECTL = findKubectl();
if (!KUBECTL)
  console.warn("k8s-manifests.test.ts: kubectl not found on PATH, so every manifest check is SKIPPED (needs kubectl)");

const nameOf = (labels: Labels) => labels["app.kubernetes.io/name"];
const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();
const allContainers = (w: Workload): Container[] => [...(w.pod.initContainers ?? []), ...w.pod.containers];

/** One overlay, rendered, with lookups the checks share. */
class Rendered {
  readonly workloads: Workload[];
  constructor(readonly objects: K8sObject[]) {
    this.workloads = workloads(objects);
  }
  of(kind: string): K8sObject[] {
    return this.objects.filter((o) => o.kind === kind);
  }
  find(kind: string, name: string): K8sObject | undefined {
    return this.objects.find((o) => o.kind === kind && o.metadata.name === name);
  }
  selected(selector: LabelSelector): Workload[] {
    return this.workloads.filter((w) => selects(selector, w.labels));
  }
  /** The workloads (server and migration pods) of one service. */
  serviceWorkloads(svc: string): Workload[] {
    return this.workloads.filter((w) => nameOf(w.labels) === svc && SERVICES.includes(svc));
  }
}

describe.skipIf(!KUBECTL).each(OVERLAYS)("deploy/k8s/overlays/%s", (overlay) => {
  let r: Rendered;
  beforeAll(() => {
    r = new Rendered(renderOverlay(KUBECTL as string, join(K8S, "overlays", overlay)));
  });

  it("renders objects that kubernetes-models accepts, each labelled part-of redline", () => {
    const problems: string[] = [];
    for (const o of r.objects) {
      const id = `${o.kind} ${o.metadata.name}`;
      const Model = MODELS[`${o.apiVersion}/${o.kind}`];
      if (!Model) problems.push(`${id}: ${o.apiVersion} ${o.kind} has no model in MODELS (add it to validate it)`);
      else {
        try {
          new Model(o as never).validate();
        } catch (err) {
          problems.push(`${id}: ${(err as Error).message}`);
        }
      }
      if (o.metadata.labels?.["app.kubernetes.io/part-of"] !== "redline") problems.push(`${id}: no part-of label`);
    }
    for (const w of r.workloads) {
      if (w.labels["app.kubernetes.io/part-of"] !== "redline" || !nameOf(w.labels))
        problems.push(`${w.kind} ${w.name}: pod template lacks app.kubernetes.io/name or part-of`);
    }
    expect(r.objects.length).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  });

  it("gives every container probes (Jobs and init containers exempt), requests and limits, the restricted securityContext and a writable /tmp", () => {
    const problems: string[] = [];
    for (const w of r.workloads) {
      const pod = w.pod;
      for (const c of allContainers(w)) {
        const id = `${w.kind} ${w.name} container ${c.name}`;
        const isInit = (pod.initContainers ?? []).includes(c);
        if (w.kind !== "Job" && !isInit) {
          if (!c.livenessProbe) problems.push(`${id}: no livenessProbe`);
          if (!c.readinessProbe) problems.push(`${id}: no readinessProbe`);
        }
        for (const side of ["requests", "limits"] as const)
          for (const res of ["cpu", "memory"])
            if (!c.resources?.[side]?.[res]) problems.push(`${id}: no ${side}.${res}`);
        const sc = c.securityContext ?? {};
        const eff = { ...pod.securityContext, ...sc };
        if (eff.runAsNonRoot !== true) problems.push(`${id}: runAsNonRoot is not true`);
        if (eff.runAsUser !== 10001) problems.push(`${id}: runAsUser is not 10001`);
        if (eff.seccompProfile?.type !== "RuntimeDefault") problems.push(`${id}: seccompProfile is not RuntimeDefault`);
        if (sc.readOnlyRootFilesystem !== true) problems.push(`${id}: readOnlyRootFilesystem is not true`);
        if (sc.allowPrivilegeEscalation !== false) problems.push(`${id}: allowPrivilegeEscalation is not false`);
        if (!sc.capabilities?.drop?.includes("ALL")) problems.push(`${id}: capabilities do not drop ALL`);
        const tmp = c.volumeMounts?.find((m) => m.mountPath === "/tmp" && !m.readOnly);
        if (!tmp || !pod.volumes?.find((v) => v.name === tmp.name)?.emptyDir)
          problems.push(`${id}: no writable emptyDir at /tmp`);
        if (c.ports?.some((p) => p.hostPort !== undefined)) problems.push(`${id}: hostPort`);
        if (!c.image || !/^[^/]+\/.+(:[\w.-]+|@sha256:[0-9a-f]+)$/.test(c.image))
          problems.push(`${id}: image ${c.image} is not retagged to a registry and tag by the overlay`);
      }
      if (pod.hostNetwork) problems.push(`${w.kind} ${w.name}: hostNetwork`);
    }
    expect(problems).toEqual([]);
  });

  it("runs each service as a Deployment (SIGTERM grace 30 s, HOME=/tmp), with a migrate-<svc> Job exactly for services with a schema", () => {
    const problems: string[] = [];
    for (const svc of SERVICES) {
      const deployment = r.workloads.find((w) => w.kind === "Deployment" && w.name === svc);
      if (!deployment || nameOf(deployment.labels) !== svc) {
        problems.push(`${svc}: no Deployment ${svc} with pods named ${svc}`);
        continue;
      }
      if (deployment.pod.terminationGracePeriodSeconds !== 30)
        problems.push(`${svc}: terminationGracePeriodSeconds is not 30`);
      for (const w of r.serviceWorkloads(svc))
        for (const c of w.pod.containers)
          if (!c.env?.some((e) => e.name === "HOME" && e.value === "/tmp"))
            problems.push(`${w.kind} ${w.name}: container ${c.name} lacks HOME=/tmp`);
      const job = r.workloads.find((w) => w.kind === "Job" && w.name === `migrate-${svc}`);
      if (!hasSchema(svc)) {
        if (job) problems.push(`${svc} has no migrations but a Job migrate-${svc}`);
        continue;
      }
      if (!job) {
        problems.push(`${svc}: no Job migrate-${svc}`);
        continue;
      }
      const [jc] = job.pod.containers;
      if (nameOf(job.labels) !== svc) problems.push(`migrate-${svc}: pods not named ${svc}`);
      if (JSON.stringify(jc.args) !== JSON.stringify(["migrate"]))
        problems.push(`migrate-${svc}: args are not [migrate]`);
      if (jc.image !== deployment.pod.containers[0].image) problems.push(`migrate-${svc}: image differs from ${svc}`);
    }
    expect(problems).toEqual([]);
  });

  it("points every Service at pods declaring its port, with port == targetPort", () => {
    const problems: string[] = [];
    for (const s of r.of("Service")) {
      const spec = s.spec as { selector?: Labels; ports: { port: number; targetPort?: number | string }[] };
      const pods = spec.selector ? r.selected({ matchLabels: spec.selector }) : [];
      if (pods.length === 0) problems.push(`Service ${s.metadata.name}: its selector matches no pod template`);
      for (const p of spec.ports) {
        if (p.targetPort !== undefined && p.targetPort !== p.port)
          problems.push(`Service ${s.metadata.name}: port ${p.port} != targetPort ${p.targetPort}`);
        for (const w of pods)
          if (!w.pod.containers.some((c) => c.ports?.some((cp) => cp.containerPort === p.port)))
            problems.push(`Service ${s.metadata.name}: port ${p.port} is not a containerPort of ${w.kind} ${w.name}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("selects pods with every NetworkPolicy and PodDisruptionBudget; HPAs and the Ingress point at what exists", () => {
    const problems: string[] = [];
    for (const np of r.of("NetworkPolicy")) {
      const spec = np.spec as { podSelector: LabelSelector };
      if (r.selected(spec.podSelector).length === 0) problems.push(`NetworkPolicy ${np.metadata.name} selects no pods`);
    }
    for (const pdb of r.of("PodDisruptionBudget")) {
      const spec = pdb.spec as { selector: LabelSelector };
      if (r.selected(spec.selector).length === 0) problems.push(`PDB ${pdb.metadata.name} selects no pods`);
    }
    for (const hpa of r.of("HorizontalPodAutoscaler")) {
      const { kind, name } = (hpa.spec as { scaleTargetRef: { kind: string; name: string } }).scaleTargetRef;
      if (!r.find(kind, name)) problems.push(`HPA ${hpa.metadata.name}: no ${kind} ${name}`);
    }
    for (const ing of r.of("Ingress")) {
      type Backend = { service: { name: string; port: { number: number } } };
      const rules = (ing.spec as { rules: { http: { paths: { backend: Backend }[] } }[] }).rules;
      for (const { backend } of rules.flatMap((rule) => rule.http.paths)) {
        const svc = r.find("Service", backend.service.name);
        const ports = (svc?.spec as { ports: { port: number }[] } | undefined)?.ports ?? [];
        if (!ports.some((p) => p.port === backend.service.port.number))
          problems.push(
            `Ingress ${ing.metadata.name}: no Service ${backend.service.name}:${backend.service.port.number}`,
          );
      }
    }
    expect(problems).toEqual([]);
  });

  it("references only ServiceAccounts, ConfigMaps and Secrets that exist (an absent Secret only when the README documents it)", () => {
    const problems: string[] = [];
    for (const sa of r.of("ServiceAccount"))
      if ((sa as { automountServiceAccountToken?: boolean }).automountServiceAccountToken !== false)
        problems.push(`ServiceAccount ${sa.metadata.name}: token automounted`);
    for (const w of r.workloads) {
      if (!w.pod.serviceAccountName || !r.find("ServiceAccount", w.pod.serviceAccountName))
        problems.push(`${w.kind} ${w.name}: ServiceAccount ${w.pod.serviceAccountName} is not in the overlay`);
      for (const c of allContainers(w)) {
        for (const ref of containerEnv(c, r.objects).refs) {
          const id = `${w.kind} ${w.name} ${ref.variable}`;
          const obj = r.find(ref.kind, ref.name);
          if (obj) {
            if (ref.key && !ref.optional && !(ref.key in objectData(obj)))
              problems.push(`${id}: ${ref.kind} ${ref.name} has no key ${ref.key}`);
          } else if (ref.kind === "ConfigMap") problems.push(`${id}: no ConfigMap ${ref.name}`);
          else if (!README.includes(`\`${ref.name}\``) || (ref.key && !README.includes(`\`${ref.key}\``)))
            problems.push(
              `${id}: Secret ${ref.name} is not in the overlay and the README does not document ${ref.key}`,
            );
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("gives each service every variable its loadConfig requires, none it never reads, and values it accepts", () => {
    const problems: string[] = [];
    for (const svc of SERVICES) {
      const loadConfig = LOADERS.get(svc) as LoadConfig;
      for (const w of r.serviceWorkloads(svc)) {
        for (const c of w.pod.containers) {
          const id = `${w.kind} ${w.name} container ${c.name}`;
          const { vars } = containerEnv(c, r.objects);
          const use = ENV_USE.get(svc) as ConfigEnvUse;
          for (const name of use.required) {
            const given = vars.get(name);
            if (!given) problems.push(`${id}: ${svc} requires ${name}; nothing provides it`);
            else if (given.optional) problems.push(`${id}: ${svc} requires ${name}; it comes from an optional ref`);
          }
          for (const [name, given] of vars)
            if (!use.reads.has(name) && !RUNTIME_ENV.has(name))
              problems.push(`${id}: ${name} (${given.source}) is read by no ${svc} config: stale`);
          try {
            // A value the overlay leaves to an external Secret is sampled as "1".
            loadConfig(Object.fromEntries([...vars].map(([name, v]) => [name, v.value ?? "1"])));
          } catch (err) {
            problems.push(`${id}: ${svc} rejects the overlay's values: ${(err as Error).message}`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("lets Prometheus scrape every server pod: a metrics containerPort, the prometheus.io annotations and METRICS_ADDR on that port", () => {
    const problems: string[] = [];
    for (const d of r.of("Deployment")) {
      const template = (d.spec as { template: { metadata?: { annotations?: Record<string, string> } } }).template;
      const w = r.workloads.find((x) => x.kind === "Deployment" && x.name === d.metadata.name);
      if (!w || !SERVICES.includes(nameOf(w.labels))) continue;
      const a = template.metadata?.annotations ?? {};
      if (
        a["prometheus.io/scrape"] !== "true" ||
        a["prometheus.io/port"] !== String(METRICS_PORT) ||
        a["prometheus.io/path"] !== "/metrics"
      )
        problems.push(`Deployment ${d.metadata.name}: prometheus.io annotations missing or wrong`);
      for (const c of w.pod.containers) {
        if (!c.ports?.some((p) => p.name === "metrics" && p.containerPort === METRICS_PORT))
          problems.push(`Deployment ${d.metadata.name} container ${c.name}: no metrics containerPort ${METRICS_PORT}`);
        const addr = containerEnv(c, r.objects).vars.get("METRICS_ADDR")?.value;
        if (addr !== `0.0.0.0:${METRICS_PORT}`) problems.push(`${d.metadata.name}: METRICS_ADDR is ${addr}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("lets into each Service only its callers: the services its address is given to, which for a service are the callers its context.ts names; only the gateway is public", () => {
    const problems: string[] = [];
    const policies = r.of("NetworkPolicy").map((np) => ({
      name: np.metadata.name,
      spec: np.spec as {
        podSelector: LabelSelector;
        policyTypes?: string[];
        ingress?: {
          from?: { podSelector?: LabelSelector; namespaceSelector?: unknown; ipBlock?: unknown }[];
          ports?: { port?: number | string }[];
        }[];
      },
    }));
    // A rule admitting only the metrics port (Prometheus from its namespace) opens no API port.
    const metricsOnly = (rule: { ports?: { port?: number | string }[] }) =>
      (rule.ports?.length ?? 0) > 0 && (rule.ports ?? []).every((p) => p.port === METRICS_PORT || p.port === "metrics");
    const denyAll = policies.find(
      (p) => Object.keys(p.spec.podSelector).length === 0 && p.spec.policyTypes?.includes("Ingress") && !p.spec.ingress,
    );
    if (!denyAll) problems.push("no default-deny ingress NetworkPolicy (podSelector {} with no ingress rules)");
    for (const s of r.of("Service")) {
      const name = s.metadata.name;
      const spec = s.spec as { selector: Labels; ports: { port: number }[] };
      const [target] = r.selected({ matchLabels: spec.selector });
      if (!target) continue; // reported by the Service check
      const admitted = new Set<string>();
      let outside = false;
      for (const p of policies.filter((p) => selects(p.spec.podSelector, target.labels)))
        for (const rule of p.spec.ingress ?? []) {
          if (metricsOnly(rule)) continue;
          if (!rule.from?.length) outside = true;
          for (const peer of rule.from ?? []) {
            if (peer.namespaceSelector || peer.ipBlock || !peer.podSelector) outside = true;
            else for (const w of r.selected(peer.podSelector)) admitted.add(nameOf(w.labels));
          }
        }
      const isGateway = nameOf(target.labels) === "gateway";
      if (isGateway !== outside)
        problems.push(
          `Service ${name}: ${isGateway ? "the gateway takes no outside traffic" : "admits outside traffic"}`,
        );
      if (isGateway) continue;
      const addresses = new RegExp(`(^|[/@])${name}:(${spec.ports.map((p) => p.port).join("|")})(?![0-9])`);
      const users = SERVICES.filter((svc) =>
        r
          .serviceWorkloads(svc)
          .some((w) =>
            w.pod.containers.some((c) =>
              [...containerEnv(c, r.objects).vars.values()].some((v) => v.value && addresses.test(v.value)),
            ),
          ),
      );
      if (sorted(admitted).join() !== sorted(users).join())
        problems.push(`Service ${name}: admits [${sorted(admitted)}] but its address is given to [${sorted(users)}]`);
      if (SERVICES.includes(nameOf(target.labels)) && sorted(users).join() !== sorted(callersOf(name)).join())
        problems.push(
          `Service ${name}: its address is given to [${sorted(users)}]; context.ts callers [${callersOf(name)}]`,
        );
    }
    expect(problems).toEqual([]);
  });
});

describe.skipIf(!KUBECTL)("overlay specifics", () => {
  const render = (overlay: string) => new Rendered(renderOverlay(KUBECTL as string, join(K8S, "overlays", overlay)));

  it("dev: everything in-cluster, one replica each but two gateways and agents, local images", () => {
    const dev = render("dev");
    const replicas = Object.fromEntries(dev.of("Deployment").map((d) => [d.metadata.name, d.spec?.replicas]));
    expect(replicas).toEqual(Object.fromEntries(SERVICES.map((s) => [s, ["gateway", "agent"].includes(s) ? 2 : 1])));
    for (const w of dev.workloads)
      for (const c of w.pod.containers) expect(c.image, `${w.name}`).toMatch(/^localhost\/redline-[a-z0-9]+:dev$/);
    const statefulSets = dev.of("StatefulSet");
    expect(sorted(statefulSets.map((s) => s.metadata.name))).toEqual(["nats", "postgres", "s3"]);
    for (const sts of statefulSets) {
      const spec = sts.spec as { serviceName: string; volumeClaimTemplates?: unknown[] };
      expect(spec.volumeClaimTemplates?.length, sts.metadata.name).toBeGreaterThan(0);
      expect(dev.find("Service", spec.serviceName)?.spec?.clusterIP, sts.metadata.name).toBe("None");
    }
  });

  it("production: no shipped Secret, two or more of each service (HPA floors for gateway, agent, ingest), the Ingress holds the body ceiling and unbuffered long streams", () => {
    const prod = render("production");
    expect(prod.of("Secret")).toEqual([]);
    const hpas = new Map(
      prod
        .of("HorizontalPodAutoscaler")
        .map((h) => h.spec as { scaleTargetRef: { name: string }; minReplicas: number })
        .map((spec) => [spec.scaleTargetRef.name, spec.minReplicas]),
    );
    expect(sorted(hpas.keys())).toEqual(["agent", "gateway", "ingest"]);
    for (const d of prod.of("Deployment")) {
      const replicas = d.spec?.replicas as number | undefined;
      const floor = hpas.get(d.metadata.name);
      // An autoscaled Deployment carries no replicas: every apply would reset the HPA's choice.
      if (floor !== undefined) expect(replicas, `${d.metadata.name} is autoscaled`).toBeUndefined();
      expect(floor ?? replicas, d.metadata.name).toBeGreaterThanOrEqual(2);
    }
    const [ingress, ...more] = prod.of("Ingress");
    expect(more).toEqual([]);
    const notes = ingress.metadata.annotations ?? {};
    const nginx = (key: string) => notes[`nginx.ingress.kubernetes.io/${key}`];
    // interface-spec.md, Limits: a platform body ceiling of about 32 MiB, answered in front of the app.
    expect(nginx("proxy-body-size")).toBe("32m");
    expect(nginx("proxy-buffering")).toBe("off");
    // A synchronous chat answers within the AI cap plus the gateway's grace; keep the proxy open longer.
    const gatewayEnv = Object.fromEntries(
      Object.entries(
        objectData(prod.of("ConfigMap").find((c) => c.metadata.name.startsWith("gateway-config")) as K8sObject),
      ),
    );
    const cfg = (LOADERS.get("gateway") as LoadConfig)(gatewayEnv) as GatewayConfig;
    const turnSeconds = (cfg.aiTimeoutMs + CHAT_DEADLINE_GRACE_MS) / 1000;
    expect(Number(nginx("proxy-read-timeout"))).toBeGreaterThan(turnSeconds);
    expect(Number(nginx("proxy-send-timeout"))).toBeGreaterThan(turnSeconds);
  });
});
