import { StorageUsageResponse } from '../../contract/quota.ts'
import type { Deps } from '../../deps.ts'
import { requireCaller } from '../../http/bearer.ts'
import { operation, type App } from '../../http/route.ts'
import { storageUsage } from './quota.service.ts'

export function quotaRoutes(app: App, deps: Deps): void {
  app.route({
    method: 'GET',
    url: '/v1/storage/usage',
    ...operation({
      operationId: 'storageUsage',
      summary: 'What the caller stores and has declared, against the storage quota and the cap on open upload sessions',
      tags: ['Uploads'],
      auth: 'bearer',
      responses: { 200: StorageUsageResponse },
      described: { 200: 'The caller’s usage and limits' },
    }),
    handler: async (request) => {
      const usage = await storageUsage(deps, requireCaller(request))
      const { accountBytes, maxOpenUploads } = deps.config.storageQuota
      return {
        stored_bytes: usage.storedBytes,
        pending_bytes: usage.pendingBytes,
        ...(accountBytes === null ? {} : { quota_bytes: accountBytes }),
        open_uploads: usage.openUploads,
        max_open_uploads: maxOpenUploads,
      }
    },
  })
}
