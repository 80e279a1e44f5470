/**
 * A schema failure as one line that leads with the reason: the path of the
 * first failing field and what is wrong with it (`choices[0].message:
 * expected an object, got null`). Requests use the same walk to name the
 * field of an `InvalidRequestError`.
 *
 * Effect's formatters print the schema's expectation and the offending value;
 * a reply's type runs to thousands of characters and a value may hold
 * anything (a model's echo of the key). This walks the issue tree, whose
 * depth is the schema's, and only names the kind of the offending value.
 */
import type * as SchemaAST from "effect/SchemaAST"
import type * as SchemaIssue from "effect/SchemaIssue"
import { formatPath } from "./path.js"

/** The kind of a value, never its contents beyond a short string or a number. */
export const kindOf = (actual: unknown): string => {
  if (actual === null) return "null"
  if (actual === undefined) return "nothing"
  if (Array.isArray(actual)) return actual.length === 0 ? "an empty array" : "an array"
  switch (typeof actual) {
    case "string":
      return actual.length <= 24 ? JSON.stringify(actual) : "a string"
    case "number":
    case "boolean":
      return String(actual)
    case "object":
      return "an object"
    default:
      return `a ${typeof actual}`
  }
}

const annotated = (ast: SchemaAST.AST, key: "message" | "expected"): string | undefined => {
  const value = ast.annotations?.[key]
  return typeof value === "string" ? value : undefined
}

const describeAst = (ast: SchemaAST.AST): string => {
  const expected = annotated(ast, "expected")
  if (expected !== undefined && ast._tag === "Declaration") return expected
  switch (ast._tag) {
    case "String":
    case "TemplateLiteral":
      return "a string"
    case "Number":
      return "a number"
    case "Boolean":
      return "a boolean"
    case "Null":
      return "null"
    case "Literal":
      return JSON.stringify(ast.literal)
    case "Objects":
      return "an object"
    case "Arrays":
      return "an array"
    case "Union": {
      // An optional field's `undefined` is no shape a reply can have.
      const members = [...new Set(ast.types.filter((t) => t._tag !== "Undefined").map(describeAst))]
      return members.length > 4 ? "one of several shapes" : members.join(" or ")
    }
    default:
      return expected ?? "a valid value"
  }
}

/** The most specific failure: where, why, and whether a schema's own message says why. */
export interface Leaf {
  readonly path: ReadonlyArray<PropertyKey>
  readonly reason: string
  readonly written: boolean
}

const expected = (ast: SchemaAST.AST, input: unknown) => `expected ${describeAst(ast)}, got ${kindOf(input)}`

const leaf = (path: ReadonlyArray<PropertyKey>, reason: string, written = false): Leaf => ({ path, reason, written })

/** The deepest leaf; among equally deep ones, one with a written message. */
const best = (leaves: ReadonlyArray<Leaf>): Leaf =>
  leaves.reduce((a, b) =>
    b.path.length > a.path.length || (b.path.length === a.path.length && b.written && !a.written) ? b : a
  )

/**
 * A union of objects told apart by one literal field (`role`), when the
 * value's field matched none: `role: expected "system" or "user", got "x"`.
 */
const discriminated = (ast: SchemaAST.Union, input: unknown, path: ReadonlyArray<PropertyKey>): Leaf | undefined => {
  if (typeof input !== "object" || input === null || !ast.types.every((t) => t._tag === "Objects")) return undefined
  const first = ast.types[0] as SchemaAST.Objects | undefined
  for (const { name } of first?.propertySignatures ?? []) {
    const literals = (ast.types as ReadonlyArray<SchemaAST.Objects>).map((t) =>
      t.propertySignatures.find((p) => p.name === name)?.type
    )
    if (!literals.every((t) => t?._tag === "Literal")) continue
    const shapes = [...new Set(literals.map((t) => describeAst(t!)))]
    return leaf([...path, name], `expected ${shapes.join(" or ")}, got ${kindOf((input as Record<PropertyKey, unknown>)[name])}`)
  }
  return undefined
}

const messageOf = (annotations: { readonly message?: unknown } | undefined) =>
  typeof annotations?.message === "string" ? annotations.message : undefined

/** The most specific failure under `issue`. */
export const leafOf = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey> = []): Leaf => {
  switch (issue._tag) {
    case "Pointer":
      return leafOf(issue.issue, [...path, ...issue.path])
    case "Encoding":
      return leafOf(issue.issue, path)
    case "Filter": {
      const inner = leafOf(issue.issue, path)
      if (inner.written || inner.path.length > path.length) return inner
      const message = messageOf(issue.filter.annotations)
      return message === undefined ? inner : leaf(path, message, true)
    }
    case "Composite":
      return issue.issues.length === 1 ? leafOf(issue.issues[0], path) : best(issue.issues.map((i) => leafOf(i, path)))
    case "AnyOf": {
      // A union: the member that got furthest, unless none got past the value itself.
      const message = annotated(issue.ast, "message")
      if (issue.issues.length > 0) {
        const deepest = best(issue.issues.map((member) => leafOf(member, path)))
        if (deepest.path.length > path.length || deepest.written) return deepest
      }
      if (message !== undefined) return leaf(path, message, true)
      return discriminated(issue.ast, issue.input, path) ?? leaf(path, expected(issue.ast, issue.input))
    }
    case "OneOf":
      return leaf(path, "matches more than one shape")
    case "MissingKey": {
      const message = issue.annotations?.messageMissingKey
      return message === undefined ? leaf(path, "is missing") : leaf(path, message, true)
    }
    case "UnexpectedKey":
      return leaf(path, "is not expected")
    case "Forbidden":
      return leaf(path, messageOf(issue.annotations) ?? "could not be checked")
    case "InvalidType": {
      const message = annotated(issue.ast, "message")
      return message === undefined ? leaf(path, expected(issue.ast, issue.input)) : leaf(path, message, true)
    }
    case "InvalidValue": {
      const message = messageOf(issue.annotations)
      return message === undefined ? leaf(path, "is not valid") : leaf(path, message, true)
    }
  }
}

/** `choices[0].message: expected an object, got null`; a failure of the value itself starts with `reply`. */
export const describe = (issue: SchemaIssue.Issue, root = "reply"): string => {
  const found = leafOf(issue)
  return `${formatPath(found.path) || root}: ${found.reason}`
}
