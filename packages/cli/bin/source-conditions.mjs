// A module resolve hook: resolves workspace packages to their TypeScript sources (the
// "@redline/source" export condition), as `node --conditions=@redline/source` would.
export async function resolve(specifier, context, nextResolve) {
  const conditions = context.conditions.includes("@redline/source")
    ? context.conditions
    : ["@redline/source", ...context.conditions];
  return nextResolve(specifier, { ...context, conditions });
}
