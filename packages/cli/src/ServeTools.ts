/**
 * The demo agent of `switchboard serve`: two tools, one of which asks for
 * approval (the page's starter message, `ServeStarter`, calls both).
 *
 * @since 1.0.0
 */
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"


/**
 * The demo page's read-only tool: the weather of a city (made up).
 *
 * @since 1.0.0
 * @category tools
 */
export const GetWeather = Tool.make("get_weather", {
  description: "The weather in a city",
  parameters: Schema.Struct({ city: Schema.String.annotate({ description: "City name" }) }),
  success: Schema.Struct({ city: Schema.String, celsius: Schema.Finite, sky: Schema.String })
})

/**
 * The demo page's tool that asks for approval before it runs.
 *
 * @since 1.0.0
 * @category tools
 */
export const SendEmail = Tool.make("send_email", {
  description: "Sends an email (asks the user first)",
  parameters: Schema.Struct({
    to: Schema.String.annotate({ description: "Address" }),
    text: Schema.String.annotate({ description: "Body" })
  }),
  success: Schema.Struct({ sent: Schema.Boolean, to: Schema.String }),
  needsApproval: true
})

/**
 * The two tools of `switchboard serve`'s agent.
 *
 * @since 1.0.0
 * @category tools
 */
export const toolkit = Toolkit.make(GetWeather, SendEmail)

/**
 * Handlers that pretend: the weather is always mild, and no email leaves
 * the machine.
 *
 * @since 1.0.0
 * @category tools
 */
export const handlers = toolkit.toLayer({
  get_weather: ({ city }) => Effect.succeed({ city, celsius: 21, sky: "sunny" }),
  send_email: ({ to }) => Effect.succeed({ sent: true, to })
})
