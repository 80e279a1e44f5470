/**
 * A small vocabulary of related words, so that emulated embeddings track
 * meaning a little: "kitten" and "cat", "couch" and "sofa", "profit" and
 * "revenue" share a concept. No model, just this table (docs/emulator.md,
 * Embeddings).
 *
 * @internal
 */

/** concept: its words (base forms; `stem` maps inflections onto them). */
const groups: ReadonlyArray<string> = [
  "cat: cat kitten kitty feline tabby",
  "dog: dog puppy pup hound canine",
  "fish: fish goldfish trout salmon",
  "bird: bird parrot sparrow robin",
  "horse: horse pony stallion",
  "animal: animal pet creature beast",
  "sleep: sleep asleep nap doze slumber snooze sleepy rest",
  "sit: sit sat seated",
  "sofa: sofa couch settee",
  "bed: bed mattress pillow",
  "mat: mat rug carpet",
  "eat: eat ate food meal dinner lunch breakfast hungry",
  "drink: drink coffee tea water juice",
  "run: run ran jog sprint race",
  "walk: walk stroll hike",
  "money: money revenue profit sale earning income price cost budget finance dollar",
  "grow: grow grew rise rose increase gain",
  "fall: fall fell drop decline decrease",
  "time: quarter quarterly year annual month week today",
  "weather: weather rain sunny sun snow forecast storm cloud wind",
  "car: car vehicle truck automobile drive",
  "computer: computer code software program laptop bug",
  "happy: happy glad joy cheerful delighted",
  "sad: sad unhappy sorrow gloomy",
  "house: house home room kitchen apartment",
  "city: city town village paris london",
  "music: music song guitar piano melody",
  "book: book novel story read"
]

/** Animals also share a broader concept. */
const animals = new Set(["cat", "dog", "fish", "bird", "horse", "animal"])

const conceptOf = new Map<string, string>(
  groups.flatMap((line) => {
    const [concept, words] = line.split(": ") as [string, string]
    return words.split(" ").map((word) => [word, concept] as const)
  })
)

const stopwords = new Set(
  "a an the on in of to is are was were be been and or at by for with it its this that as from into i you he she we they my your".split(" ")
)

export const isStopword = (word: string): boolean => stopwords.has(word)

/** A crude stem: plural and verb endings off, so "sleeps", "sleeping" and "slept"-free forms meet. */
export const stem = (word: string): string => {
  if (word.length <= 3) return word
  const cut = (suffix: string) => word.slice(0, -suffix.length)
  let base = word
  if (word.endsWith("ies") && word.length > 4) base = `${cut("ies")}y`
  else if (word.endsWith("ing") && word.length > 5) base = cut("ing")
  else if (word.endsWith("ed") && word.length > 4) base = cut("ed")
  else if (word.endsWith("es") && /(s|x|z|ch|sh)es$/.test(word)) base = cut("es")
  else if (word.endsWith("s") && !word.endsWith("ss")) base = cut("s")
  // "napping" → "napp" → "nap"
  return /([^aeiouls])\1$/.test(base) ? base.slice(0, -1) : base
}

/** The concepts of a word: its group's, and "animal" for every animal. */
export const concepts = (word: string): ReadonlyArray<string> => {
  const concept = conceptOf.get(word) ?? conceptOf.get(stem(word))
  if (concept === undefined) return []
  return animals.has(concept) && concept !== "animal" ? [concept, "animal"] : [concept]
}
