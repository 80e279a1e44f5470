/**
 * A workflow run that lets its shard go by itself. On effect/cluster, a
 * runner handing a shard over (a runner joined and the shard is assigned to
 * it, or this one is stopping) waits for the shard's workflow runs to end
 * before it releases the shard, up to `entityTerminationTimeout` (15 s by
 * default): a run that polls never ends by itself, and one parked on a step
 * this runner will no longer serve (an activity's request claimed from
 * storage just before the handover began, then never delivered: effect
 * leaves its caller waiting on a runner that keeps running) never ends at
 * all. Such a run ends without a result, marked abandoned: effect/cluster
 * leaves it in storage and the shard's next owner replays it. Elsewhere (the
 * in-memory engine) there is no shard, and nothing to do.
 *
 * @internal
 */
import * as ClusterSchema from "effect/cluster/ClusterSchema"
import * as Entity from "effect/cluster/Entity"
import type { EntityAddress } from "effect/cluster/EntityAddress"
import * as Sharding from "effect/cluster/Sharding"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"

/**
 * How often a run waiting on a step asks whether its shard is still this
 * runner's: an in-memory lookup. effect/cluster refreshes the assignments
 * every 3 s by default, so a second adds at most that much to a handover.
 */
export const handoverCheck: Duration.Duration = Duration.seconds(1)

/** This runner's sharding and the run's shard, when the run is on effect/cluster. */
const placement = Effect.map(
  Effect.all([Effect.serviceOption(Sharding.Sharding), Effect.serviceOption(Entity.CurrentAddress)]),
  ([sharding, address]) => Option.zipWith(sharding, address, (sharding, address) => ({ sharding, address }))
)

const handedOver = (address: EntityAddress, where: string) =>
  Effect.logDebug(`workflow ${address.entityId}: shard ${address.shardId} handed over ${where}, the run goes on at its next owner`)

/** Ends `run` without a result, as effect/cluster's own abandonment does. */
const abandonUnsafe = (run: Fiber.Fiber<unknown, unknown>) => run.interruptUnsafe(run.id, ClusterSchema.Abandon.annotation)

/** Ends the current run abandoned. */
const abandon = (address: EntityAddress) =>
  Effect.andThen(
    handedOver(address, "between steps"),
    Effect.interruptible(Effect.withFiber<never>((run) => {
      abandonUnsafe(run)
      return Effect.never
    }))
  )

/** Ends the run abandoned if this runner has let go of its shard; checked between steps. */
export const yieldIfHandedOver: Effect.Effect<void> = Effect.flatMap(placement, (here) =>
  Option.isNone(here) || here.value.sharding.hasShardId(here.value.address.shardId)
    ? Effect.void
    : abandon(here.value.address))

/**
 * `step` (an activity, or a short `DurableClock` sleep, which is one), with
 * the run ended abandoned if this runner lets go of the shard while the run
 * waits for it: checked before, then every `handoverCheck` by a fiber of its
 * own that interrupts the run as `yieldIfHandedOver` would. The step runs on
 * the run's fiber (an activity that suspends the run interrupts that
 * fiber). What an activity does on this runner meanwhile goes on (effect
 * runs it in a fiber of its own, which the shard's release waits for) and
 * its result is stored for the next owner's replay; only the run's wait ends.
 */
export const whileOwned = <A, E, R>(step: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(placement, (here) => {
    if (Option.isNone(here)) return step
    const { address, sharding } = here.value
    const owned = Effect.sync(() => sharding.hasShardId(address.shardId))
    const released = Effect.repeat(owned, { while: (still) => still, schedule: Schedule.spaced(handoverCheck) })
    const watched = Effect.withFiber<A, E, R>((run) =>
      Effect.flatMap(
        Effect.forkChild(Effect.andThen(released, Effect.andThen(handedOver(address, "while a step was waited for"), Effect.sync(() => abandonUnsafe(run))))),
        (watcher) => Effect.ensuring(Effect.interruptible(step), Fiber.interrupt(watcher))
      ))
    return Effect.andThen(yieldIfHandedOver, watched)
  })
