// What a builder throws when its input would be refused by the server (or could never be
// read back): every problem at once, each naming the field.
export class CofferInputError extends Error {
  /** One line per problem, e.g. `manifest_envelope/timestamp: must match format "date-time"`. */
  readonly problems: readonly string[]
  constructor(what: string, problems: readonly string[]) {
    super(`${what}: ${problems.join('; ')}`)
    this.name = 'CofferInputError'
    this.problems = problems
  }
}

/** Throws a CofferInputError for `what` when `problems` is not empty. */
export function refuseIf(what: string, problems: readonly string[]): void {
  if (problems.length > 0) throw new CofferInputError(what, problems)
}
