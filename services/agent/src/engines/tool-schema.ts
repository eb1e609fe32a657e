// The shape of one OpenAI function tool, so each tool table lists only what differs.

/** An OpenAI function tool (ChatCompletionFunctionTool's shape). */
export interface FunctionTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** A function tool taking an object of `properties`, `required` ones listed (none: no `required` key). */
export function functionTool(
  name: string,
  description: string,
  properties: Record<string, unknown>,
  required: string[] = [],
): FunctionTool {
  const parameters = {
    type: "object",
    properties,
    ...(required.length > 0 && { required }),
    additionalProperties: false,
  };
  return { type: "function", function: { name, description, parameters } };
}
