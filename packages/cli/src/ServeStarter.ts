/**
 * The starter message of `switchboard serve`'s page: it makes the emulator
 * call both tools of `ServeTools`, one step each (docs/emulator.md, "Tools").
 * A module of its own so that the page, which imports it, bundles nothing
 * else of the CLI.
 *
 * @since 1.0.0
 */

/**
 * The starter message the page offers: it names both tools, so the
 * emulator calls them.
 *
 * @since 1.0.0
 * @category constants
 */
export const starter =
  "Use get_weather({\"city\":\"Paris\"}) then send_email({\"to\":\"sam@example.com\",\"text\":\"Sunny in Paris\"})"
