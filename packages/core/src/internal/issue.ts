/**
 * A decode failure as one line that leads with the reason: the path of the
 * first failing field and what is wrong with it (`choices[0].message:
 * expected an object, got null`).
 *
 * Effect's formatters print the schema's type and the whole offending value;
 * a reply's type runs to thousands of characters and a value nested deeply
 * enough overflows the stack while printed. This walks the issue tree, whose
 * depth is the schema's, and only names the kind of the offending value.
 */
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as AST from "effect/SchemaAST"
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

const describeAst = (ast: AST.AST): string => {
  switch (ast._tag) {
    case "StringKeyword":
    case "TemplateLiteral":
      return "a string"
    case "NumberKeyword":
      return "a number"
    case "BooleanKeyword":
      return "a boolean"
    case "Literal":
      return ast.literal === null ? "null" : JSON.stringify(ast.literal)
    case "TypeLiteral":
      return "an object"
    case "TupleType":
      return "an array"
    case "Union": {
      // An optional field's `undefined` is no shape a reply can have.
      const members = [...new Set(ast.types.filter((t) => t._tag !== "UndefinedKeyword").map(describeAst))]
      return members.length > 4 ? "one of several shapes" : members.join(" or ")
    }
    case "Refinement":
    case "Transformation":
      return describeAst(ast.from)
    case "Declaration":
      return Option.getOrElse(AST.getDescriptionAnnotation(ast), () => "a valid value")
    default:
      return "a valid value"
  }
}

interface Leaf {
  readonly path: ReadonlyArray<PropertyKey>
  readonly reason: string
}

const expected = (ast: AST.AST, actual: unknown) => `expected ${describeAst(ast)}, got ${kindOf(actual)}`

/** The most specific failure under `issue`: the deepest path. */
const leafOf = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>): Leaf => {
  switch (issue._tag) {
    case "Pointer":
      return leafOf(issue.issue, [...path, ...(Array.isArray(issue.path) ? issue.path : [issue.path])])
    case "Refinement":
    case "Transformation":
      return leafOf(issue.issue, path)
    case "Composite": {
      const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]
      if (issues.length === 1) return leafOf(issues[0]!, path)
      // A union: the member that got furthest, unless none got past the value itself.
      const leaves = issues.map((member) => leafOf(member, path))
      const deepest = leaves.reduce((a, b) => (b.path.length > a.path.length ? b : a))
      return deepest.path.length > path.length ? deepest : { path, reason: expected(issue.ast, issue.actual) }
    }
    case "Missing":
      return { path, reason: "is missing" }
    case "Unexpected":
      return { path, reason: "is not expected" }
    case "Forbidden":
      return { path, reason: "could not be checked" }
    case "Type":
      return { path, reason: issue.message ?? expected(issue.ast, issue.actual) }
  }
}

/** `choices[0].message: expected an object, got null`; a failure of the value itself starts with `reply`. */
export const describe = (error: ParseResult.ParseError, root = "reply"): string => {
  const leaf = leafOf(error.issue, [])
  return `${formatPath(leaf.path) || root}: ${leaf.reason}`
}
