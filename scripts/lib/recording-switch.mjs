// Preloaded (NODE_OPTIONS=--import) into each service process of a bench stack: a control socket,
// <BENCH_RECORDING_SWITCH_DIR>/<pid>.sock. GET /?tracing=0|1&metrics=0|1 switches this process's
// per-request tracing and metrics hooks (setTracingRecording, setMetricsRecording) and answers
// what is now on, as JSON; GET /flush exports the spans ended so far. So bench (o) compares on
// and off in the same service processes: two stacks of the same code differ by more than the
// 3 % it measures. Bench-only; a service never loads it on its own.
import { createServer } from "node:http";
import { join } from "node:path";

const dir = process.env.BENCH_RECORDING_SWITCH_DIR;
// Only a serving process: `main.ts migrate` exits at once.
if (dir && process.argv[2] === undefined) {
  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", "http://switch");
      // Imported on the first request, after the service loaded it, so it is the service's own
      // module instance (the tsx loader, which resolves it to sources, registers after this file).
      const kit = await import("@redline/service-kit");
      // initTracing without a config returns the process's tracing as set up at start.
      if (url.pathname === "/flush") await kit.initTracing("", undefined).flush();
      else {
        kit.setTracingRecording(url.searchParams.get("tracing") === "1");
        kit.setMetricsRecording(url.searchParams.get("metrics") === "1");
      }
      // Read back from the module the service set up: a second instance would answer tracing false.
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify({ tracing: kit.tracingEnabled(), metrics: kit.metricsEnabled() }));
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
  server.listen(join(dir, `${process.pid}.sock`));
  server.unref();
}
