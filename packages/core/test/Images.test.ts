import { describe, expect, it } from "@effect/vitest"
import { parseImages } from "../src/Images.js"

describe("Images.parseImages (decision 4)", () => {
  it("reads markdown images in order, with alt text", () => {
    const content = "Here: ![a fox](https://x/1.png) and ![b](https://x/2.png \"title\") see https://docs/x"
    expect(parseImages(content)).toEqual([
      { url: "https://x/1.png", alt: "a fox" },
      { url: "https://x/2.png", alt: "b" }
    ])
  })

  it("falls back to data URIs, then to bare URLs", () => {
    expect(parseImages("raw data:image/png;base64,iVBORw0KGgo= done")).toEqual([
      { url: "data:image/png;base64,iVBORw0KGgo=", mediaType: "image/png" }
    ])
    expect(parseImages("Your image: https://cdn.example.com/a.png.")).toEqual([{ url: "https://cdn.example.com/a.png" }])
  })

  it("reads the markdown forms the pattern did: angle brackets, spaces, a data URI, an image after a broken one", () => {
    expect(parseImages("![x] (no) ![a]( <https://x/1.png> ) ![](data:image/png;base64,iVBORw0KGgo=) ![b](https://x/2.png)")).toEqual([
      { url: "https://x/1.png", alt: "a" },
      { url: "data:image/png;base64,iVBORw0KGgo=", mediaType: "image/png" },
      { url: "https://x/2.png", alt: "b" }
    ])
    expect(parseImages("![a](two words) ![c](https://x/3.png)")).toEqual([{ url: "https://x/3.png", alt: "c" }])
  })

  // A reply is the service's data: many `![` or `](` that never close took a
  // pattern over the whole form time quadratic in their number (1 MB: hours).
  it("reads a megabyte of openings that never close in time linear in its length", () => {
    for (const opening of ["![", "![](", "![a](b", "!["]) {
      expect(parseImages(opening.repeat(1_000_000 / opening.length))).toEqual([])
    }
    expect(parseImages(`${"![".repeat(500_000)}](https://x/1.png)`)).toEqual([{ url: "https://x/1.png", alt: "![".repeat(499_999) }])
    const dotted = `https://x/${".".repeat(1_000_000)}x`
    expect(parseImages(`${dotted}.`)).toEqual([{ url: dotted }])
  })

  // Openings whose target is not one, sharing one `)` far on: each was read to that `)`
  // again (80 KB took 3.5 s, growing as its square: 1 MB about ten minutes, the event loop held).
  it("reads a megabyte of openings whose target is not one, up to one far `)`, in time linear in its length", () => {
    const n = 1_000_000
    expect(parseImages(`${"![](".repeat(n / 4)} x y)`)).toEqual([])
    expect(parseImages(`${"![](a ".repeat(n / 6)}x)`)).toEqual([])
    expect(parseImages(`${"![".repeat(n / 2)}](a "${"t".repeat(n)})`)).toEqual([])
    expect(parseImages(`${"![](".repeat(n / 4)}<x>  "a title" )`)).toHaveLength(1)
  })

  it("finds nothing in plain text", () => {
    expect(parseImages("I cannot draw that.")).toEqual([])
  })
})
