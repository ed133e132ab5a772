// Every answer a test server gives is one its OpenAPI document declares: the status among the
// operation's responses and, for a problem, its `code` among those the response lists. Each
// server of test/support/server.ts records what it answered (method, route, status, code) and
// its close() fails the test file on an answer the document does not declare, naming it. So
// the HTTP suites, whatever they exercise, check the document on both engines
// (docs/decisions/0013-openapi-document.md).
import type { App } from '../../src/http/route.ts'

interface DocumentedResponse {
  readonly description?: string
  readonly $ref?: string
}

interface Document {
  readonly paths: Record<string, Record<string, { responses?: Record<string, DocumentedResponse> }>>
  readonly components?: { responses?: Record<string, DocumentedResponse> }
}

export interface AnswerLog {
  /** Answers the document does not declare, one line each ("GET /v1/albums 409 error.x"). */
  undeclared(): string[]
}

const codeOf = new WeakMap<object, string>()

/** `:name` path parameters as the document spells them. */
function documentPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
}

export function watchAnswers(app: App): AnswerLog {
  const answers = new Set<string>()
  app.addHook('onSend', async (request, reply, payload) => {
    const type = String(reply.getHeader('content-type') ?? '')
    if (type.startsWith('application/problem+json') && typeof payload === 'string') {
      const code = (JSON.parse(payload) as { code?: unknown }).code
      if (typeof code === 'string') codeOf.set(request, code)
    }
  })
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url
    if (route === undefined) return // no operation answered: unrouted answers are not operations
    const method = request.method === 'HEAD' ? 'GET' : request.method
    answers.add([method, route, reply.statusCode, codeOf.get(request) ?? ''].join(' ').trim())
  })
  return {
    undeclared() {
      const document = app.swagger() as unknown as Document
      const shared = document.components?.responses ?? {}
      const resolve = (response: DocumentedResponse | undefined) =>
        response?.$ref === undefined ? response : shared[response.$ref.replace('#/components/responses/', '')]
      return [...answers].filter((answer) => {
        const [method = '', route = '', status = '', code] = answer.split(' ')
        const operation = document.paths[documentPath(route)]?.[method.toLowerCase()]
        if (operation === undefined) return false // hidden: /docs, /openapi.json
        const response = resolve(operation.responses?.[status])
        if (response === undefined) return true
        return code !== undefined && !(response.description ?? '').includes(`\`${code}\``)
      })
    },
  }
}
