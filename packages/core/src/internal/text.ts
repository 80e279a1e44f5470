/** Short texts for error messages. */

const previewLength = 200

/** Keeps error texts short: the start of a body is enough to recognise it. */
export const truncate = (text: string, max = previewLength): string =>
  text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`
