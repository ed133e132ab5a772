// Failed operator requests in the operator's terms: a refused token locks the page again, an
// unknown id says which kind of id; everything else as the rest of the app says it.
import { CofferProblem } from '#sdk/client.ts'

export type Lock = (notice: string) => void

/**
 * Runs `work`; a failure is thrown again as the operator should read it, except a refused token,
 * which locks the page (with a notice) and answers undefined.
 */
export async function asOperator<T>(subject: 'account' | 'asset', onLock: Lock, work: () => Promise<T>): Promise<T | undefined> {
  try {
    return await work()
  } catch (error) {
    if (!(error instanceof CofferProblem)) throw error
    if (error.status === 401) {
      onLock('The server no longer takes that token (was ADMIN_TOKEN changed?). Enter the current one.')
      return undefined
    }
    if (error.code === 'error.not_found') throw new Error(`No ${subject} has this id. Check it and try again.`)
    throw error
  }
}
