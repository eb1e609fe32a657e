// The built-ins pdf.js's legacy build replaces with core-js polyfills, captured before it loads
// (this module is imported ahead of pdfjs-dist in pdfjs.ts, and ES modules run in import order).
export const NATIVE_PUSH = Array.prototype.push;
