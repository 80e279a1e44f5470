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

  it("finds nothing in plain text", () => {
    expect(parseImages("I cannot draw that.")).toEqual([])
  })
})
