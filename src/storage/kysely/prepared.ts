// Queries on the hot path (the bearer check, the caller's account) are compiled once per
// database handle and then run with new parameters: Kysely's builder and compiler cost more
// per request than the indexed lookup itself. Only for queries whose SQL does not depend on
// the parameter values (no IN lists, no optional clauses).
import type { CompiledQuery, Compilable } from 'kysely'
import type { Executor } from './executor.ts'

export function preparedQuery<Row, Params extends readonly unknown[]>(build: (db: Executor, ...params: Params) => Compilable<Row>) {
  const compiled = new WeakMap<Executor, CompiledQuery<Row>>()
  return async (db: Executor, ...params: Params): Promise<Row | undefined> => {
    let query = compiled.get(db)
    if (query === undefined) {
      query = build(db, ...params).compile()
      compiled.set(db, query)
    }
    const result = await db.executeQuery<Row>({ ...query, parameters: params })
    return result.rows[0]
  }
}
