// The pure translation of the smoke's podman adapter: Kubernetes objects → pods and podman argv.
// No podman is needed; `pnpm k8s:smoke` plays the real overlay.
import { describe, expect, it } from "vitest";
import type { K8sObject } from "./manifests.js";
import { parseObjects } from "./manifests.js";
import { addresses, bytes, cpus, expand, planRun, type RunNames } from "./translate.js";

const names: RunNames = {
  id: "abc123",
  prefix: "redline-smoke-abc123",
  network: "redline-smoke-abc123",
  subnet: "10.89.7.0/24",
  filesDir: "/tmp/run",
};
const b64 = (s: string) => Buffer.from(s).toString("base64");

const objects = parseObjects(`
apiVersion: v1
kind: Namespace
metadata: {name: redline}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: common}
data: {NATS_URL: "nats://nats:4222", LOG_LEVEL: info}
---
apiVersion: v1
kind: Secret
metadata: {name: db}
data: {DATABASE_URL: ${b64("postgres://u:pw@postgres:5432/redline")}, PGPASSWORD: ${b64("pw")}}
---
apiVersion: v1
kind: Service
metadata: {name: gateway}
spec: {selector: {app: gateway}, ports: [{port: 8080, targetPort: http}]}
---
apiVersion: v1
kind: Service
metadata: {name: postgres}
spec: {clusterIP: None, selector: {app: postgres}, ports: [{port: 5432, targetPort: 5432}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: gateway}
spec:
  replicas: 2
  selector: {matchLabels: {app: gateway}}
  template:
    metadata: {labels: {app: gateway, tier: edge}}
    spec:
      terminationGracePeriodSeconds: 20
      securityContext: {runAsUser: 10001, runAsGroup: 10001, runAsNonRoot: true}
      containers:
        - name: gateway
          image: localhost/redline-gateway:dev
          ports: [{name: http, containerPort: 8080}]
          envFrom: [{configMapRef: {name: common}}, {secretRef: {name: db}}]
          env:
            - {name: LISTEN_ADDR, value: "0.0.0.0:8080"}
            - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
            - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
            - {name: PW, valueFrom: {secretKeyRef: {name: db, key: PGPASSWORD}}}
            - {name: DSN, value: "host=postgres password=$(PW) x=$$(PW)"}
            - {name: TIER, valueFrom: {fieldRef: {fieldPath: "metadata.labels['tier']"}}}
          resources: {limits: {memory: 256Mi, cpu: 500m}}
          readinessProbe: {httpGet: {path: /health, port: http}, periodSeconds: 2}
          livenessProbe: {grpc: {port: 8061}}
          volumeMounts: [{name: tmp, mountPath: /tmp}, {name: conf, mountPath: /etc/redline}]
          securityContext:
            readOnlyRootFilesystem: true
            allowPrivilegeEscalation: false
            capabilities: {drop: [ALL]}
      volumes:
        - {name: tmp, emptyDir: {sizeLimit: 64Mi}}
        - {name: conf, configMap: {name: common, items: [{key: LOG_LEVEL, path: level}]}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate-documents}
spec:
  backoffLimit: 3
  activeDeadlineSeconds: 600
  template:
    spec:
      restartPolicy: Never
      containers:
        - {name: migrate, image: localhost/redline-documents:dev, args: [migrate], envFrom: [{secretRef: {name: db}}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: postgres}
spec:
  serviceName: postgres
  replicas: 1
  selector: {matchLabels: {app: postgres}}
  template:
    metadata: {labels: {app: postgres}}
    spec:
      securityContext: {runAsUser: 10001, fsGroup: 10001}
      containers:
        - name: postgres
          image: localhost/redline-postgres:dev
          command: [postgres, -D, /var/lib/postgresql/data]
          readinessProbe: {exec: {command: [pg_isready]}}
          volumeMounts: [{name: data, mountPath: /var/lib/postgresql/data}]
  volumeClaimTemplates:
    - metadata: {name: data}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`);

const plan = planRun(objects, names);
const pod = (name: string) => plan.pods.find((p) => p.name === name)!;
/** The value following `flag` in argv, or every value when it repeats. */
const values = (argv: string[], flag: string) => argv.flatMap((a, i) => (argv[i - 1] === flag ? [a] : []));

describe("planRun", () => {
  it("plays StatefulSets, then Jobs, then Deployments, one pod per replica with fixed addresses", () => {
    expect(plan.problems).toEqual([]);
    expect(plan.pods.map((p) => [p.name, p.phase, p.ip])).toEqual([
      ["postgres-0", "stateful", "10.89.7.10"],
      ["migrate-documents", "job", "10.89.7.11"],
      ["gateway-0", "workload", "10.89.7.12"],
      ["gateway-1", "workload", "10.89.7.13"],
    ]);
    expect(plan.notes).toEqual(["Namespace ×1: not played (no podman counterpart)"]);
  });

  it("makes each Service a DNS alias of every pod it selects, with the pod's address; nothing is published", () => {
    for (const name of ["gateway-0", "gateway-1"]) {
      const argv = pod(name).containers[0].argv;
      expect(values(argv, "--network")).toEqual([`${names.network}:ip=${pod(name).ip},alias=gateway`]);
      expect(values(argv, "--hostname")).toEqual([name]);
      expect(argv.some((a) => a === "-p" || a.startsWith("--publish"))).toBe(false);
    }
    expect(pod("gateway-0").services).toEqual([{ name: "gateway", ports: [8080] }]);
    expect(pod("postgres-0").aliases).toEqual(["postgres", "postgres-0.postgres"]);
    expect(pod("migrate-documents").aliases).toEqual([]);
  });

  it("names and labels every container with the run's prefix and id", () => {
    const argv = pod("gateway-1").containers[0].argv;
    expect(argv.slice(0, 4)).toEqual(["run", "-d", "--name", "redline-smoke-abc123-gateway-1"]);
    expect(values(argv, "--label")).toEqual(["io.redline.smoke.run=abc123", "io.redline.smoke.pod=gateway-1"]);
    expect(argv).toContain("--pull=never");
  });

  it("resolves envFrom and env like Kubernetes; Secret values travel outside argv", () => {
    const c = pod("gateway-1").containers[0];
    expect(c.env).toMatchObject({
      NATS_URL: "nats://nats:4222",
      DATABASE_URL: "postgres://u:pw@postgres:5432/redline",
      POD_NAME: "gateway-1",
      POD_IP: "10.89.7.13",
      DSN: "host=postgres password=pw x=$(PW)",
      TIER: "edge",
    });
    expect(Object.keys(c.secretEnv).sort()).toEqual(["DATABASE_URL", "DSN", "PGPASSWORD", "PW"]);
    const env = values(c.argv, "--env");
    expect(env).toContain("DATABASE_URL");
    expect(env).toContain("NATS_URL=nats://nats:4222");
    expect(c.argv.join(" ")).not.toContain("pw");
  });

  it("honours the securityContext, limits and grace period", () => {
    const argv = pod("gateway-0").containers[0].argv;
    expect(values(argv, "--user")).toEqual(["10001:10001"]);
    for (const flag of ["--read-only", "--read-only-tmpfs=false", "--cap-drop=all", "--security-opt=no-new-privileges"])
      expect(argv).toContain(flag);
    expect(argv).toContain(`--memory=${256 * 2 ** 20}`);
    expect(argv).toContain("--cpus=0.5");
    expect(argv).toContain("--stop-timeout=20");
    expect(argv).toContain("--restart=always");
    expect(pod("gateway-0").containers[0].requireNonRootImage).toBe(false);
  });

  it("mounts an emptyDir as a world-writable tmpfs and configMap items as read-only files", () => {
    const p = pod("gateway-0");
    expect(values(p.containers[0].argv, "--mount")).toEqual([
      `type=tmpfs,destination=/tmp,tmpfs-mode=1777,tmpfs-size=${64 * 2 ** 20}`,
    ]);
    expect(values(p.containers[0].argv, "-v")).toEqual(["/tmp/run/gateway-0/conf:/etc/redline:ro"]);
    expect(p.files).toEqual([{ path: "/tmp/run/gateway-0/conf/level", content: "info", mode: 0o644 }]);
  });

  it("gives each StatefulSet replica a named volume per claim template, owned by fsGroup", () => {
    const p = pod("postgres-0");
    expect(p.volumes).toEqual(["redline-smoke-abc123-data-postgres-0"]);
    const argv = p.containers[0].argv;
    expect(values(argv, "-v")).toEqual(["redline-smoke-abc123-data-postgres-0:/var/lib/postgresql/data:U"]);
    expect(values(argv, "--group-add")).toEqual(["10001"]);
    expect(argv).toContain('--entrypoint=["postgres","-D","/var/lib/postgresql/data"]');
    expect(argv.at(-1)).toBe("localhost/redline-postgres:dev");
  });

  it("runs a Job once, without restart policy, retried up to backoffLimit by the player", () => {
    const p = pod("migrate-documents");
    expect(p.retries).toBe(3);
    expect(p.activeDeadlineMs).toBe(600_000);
    expect(p.containers[0].argv).toContain("--restart=no");
    expect(p.containers[0].argv.slice(-2)).toEqual(["localhost/redline-documents:dev", "migrate"]);
  });

  it("plans probes with Kubernetes' defaults and named ports resolved", () => {
    const { readiness, liveness } = pod("gateway-0").containers[0].probes;
    expect(readiness).toEqual({
      action: { type: "http", port: 8080, path: "/health", scheme: "http", headers: {} },
      initialDelayMs: 0,
      periodMs: 2000,
      timeoutMs: 1000,
      successThreshold: 1,
      failureThreshold: 3,
    });
    expect(liveness?.action).toEqual({ type: "grpc", port: 8061, service: "" });
    expect(pod("postgres-0").containers[0].probes.readiness?.action).toEqual({ type: "exec", command: ["pg_isready"] });
  });

  it("lists what it cannot play faithfully instead of approximating it", () => {
    const bad = planRun(
      parseObjects(`
apiVersion: v1
kind: Service
metadata: {name: api}
spec: {selector: {app: api}, ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
        - name: api
          image: x
          env: [{name: K, valueFrom: {secretKeyRef: {name: missing, key: k}}}]
          volumeMounts: [{name: host, mountPath: /h}]
      volumes: [{name: host, hostPath: {path: /etc}}]
`),
      names,
    );
    expect(bad.problems).toEqual([
      "Service/api: port 80 → targetPort 8080 (a DNS alias cannot remap ports)",
      'api-0: volume "host" of type hostPath is not supported by the smoke adapter',
      'api-0/api: env K refers to Secret "missing" key "k", which is not in the manifests',
    ]);
  });
});

describe("helpers", () => {
  it("reads quantities and expands $(VAR)", () => {
    expect(bytes("256Mi")).toBe(268435456);
    expect(bytes("1G")).toBe(1e9);
    expect(bytes("1048576")).toBe(1048576);
    expect(() => bytes("lots")).toThrow(/memory quantity/);
    expect(cpus("250m")).toBe(0.25);
    expect(cpus("2")).toBe(2);
    expect(expand("a $(X) $(Y) $$(X)", { X: "1" })).toEqual({ value: "a 1 $(Y) $(X)", refs: ["X"] });
  });

  it("hands out subnet addresses from .10 and none for odd subnets", () => {
    const gen = addresses("10.0.1.0/24");
    expect([gen.next().value, gen.next().value]).toEqual(["10.0.1.10", "10.0.1.11"]);
    expect([...addresses("10.0.1.0/24")]).toHaveLength(245);
    expect([...addresses("fd00::/64")]).toEqual([]);
  });

  it("rejects objects without kind or name", () => {
    expect(() => parseObjects("kind: ConfigMap\nmetadata: {}\n")).toThrow(/without kind/);
    const objs: K8sObject[] = parseObjects(
      "---\n# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    );
    expect(objs.map((o) => o.metadata.name)).toEqual(["a"]);
  });
});
