// Small DOM helpers: element lookup by id that fails loudly, and an element builder that sets
// text (never HTML) so nothing from the API is ever parsed as markup outside the document view.

/** The element with `id`; throws when the page lacks it (a broken build, not a user error). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`playground: #${id} is missing from index.html`);
  return el as T;
}

type Child = Node | string | null | undefined | false;

/** `<tag class=… data-…>children</tag>`; strings become text nodes. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { class?: string; text?: string; title?: string; type?: string; data?: Record<string, string> } = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.class) el.className = props.class;
  if (props.text !== undefined) el.textContent = props.text;
  if (props.title) el.title = props.title;
  if (props.type) el.setAttribute("type", props.type);
  for (const [k, v] of Object.entries(props.data ?? {})) el.dataset[k] = v;
  for (const child of children) if (child) el.append(child);
  return el;
}

/** Shows `text` in the status bar; errors in red. */
export function status(text: string, kind: "info" | "error" = "info"): void {
  const el = byId("status");
  el.textContent = text;
  el.className = kind === "error" ? "error" : "";
}

/** A bar's width through the CSSOM (the CSP refuses style attributes in markup, not CSSOM writes). */
export function setWidth(el: HTMLElement, percent: number): void {
  el.style.width = `${Math.max(0, Math.min(100, percent))}%`;
}
