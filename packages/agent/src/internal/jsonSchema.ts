/**
 * Tool parameters as JSON Schema: core's `JsonSchema`, shared with
 * structured output.
 *
 * @internal
 */
export { toolParameters } from "@switchboard/core/JsonSchema"
