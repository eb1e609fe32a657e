// pdf.js (legacy build, the one for Node) with its worker loaded in this thread, as its Node
// "fake worker" would on the first document anyway.
//
// Why the extra steps: the legacy build's bundled core-js swaps Array.prototype.push for a
// JavaScript polyfill (for the error a non-writable array length should throw, which nothing
// here relies on). That made every push in the process 2-3x slower, and pdf.js pushes a lot
// building text and operator lists. The native push is put back once both bundles ran.
// First, so it runs before the bundles (a bare import keeps its place when imports are sorted).
import "./pdfjs-natives.js";
import * as pdfjs from "pdfjs-dist/legacy/build/pdf.mjs";
import { NATIVE_PUSH } from "./pdfjs-natives.js";
// Sets globalThis.pdfjsWorker, which pdf.js then uses instead of importing the worker later.
import "pdfjs-dist/legacy/build/pdf.worker.mjs";

Array.prototype.push = NATIVE_PUSH;

export { pdfjs };
