// The error a reader of a file another program wrote (a Takeout sidecar, an XMP sidecar, Apple's
// Photo Details) throws when it does not read it: the one error each throws, with a `problem` a
// caller can tell apart (and report) without matching on its message.
export class ProblemError<Problem extends string> extends Error {
  readonly problem: Problem

  constructor(problem: Problem, message: string) {
    super(message)
    this.name = new.target.name
    this.problem = problem
  }
}
