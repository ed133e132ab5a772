// The TypeScript types openapi-typescript generates from the committed openapi.json: what a
// client developer gets from `npx openapi-typescript openapi.json`. `npm run openapi` writes
// them to test/generated/openapi.d.ts, test/architecture/openapi.test.ts checks that file is a
// fresh generation, and test/http/openapi-client.test.ts drives a server through openapi-fetch
// with them (type-checked by `tsc -p .`).
import { writeFile } from 'node:fs/promises'
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript'

export const DOCUMENT = new URL('../../openapi.json', import.meta.url)
export const GENERATED_TYPES = new URL('../generated/openapi.d.ts', import.meta.url)

/** The types of `document`, exactly as the openapi-typescript command line writes them. */
export async function generatedTypes(document: URL = DOCUMENT): Promise<string> {
  return `${COMMENT_HEADER}${astToString(await openapiTS(document))}`
}

if (import.meta.main) await writeFile(GENERATED_TYPES, await generatedTypes())
