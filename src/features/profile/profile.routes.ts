import { ProfileResponse, UpdateProfileRequest } from '../../contract/profile.ts'
import type { Deps } from '../../deps.ts'
import { requireCaller } from '../../http/bearer.ts'
import { JSON_MEDIA, operation, type App } from '../../http/route.ts'
import { getProfile, profileView, updateProfile } from './profile.service.ts'

const tags = ['Profile']

export function profileRoutes(app: App, deps: Deps): void {
  app.route({
    method: 'GET',
    url: '/v1/profile',
    ...operation({
      operationId: 'getProfile',
      summary: 'The caller’s profile',
      tags,
      auth: 'bearer',
      responses: { 200: ProfileResponse },
      described: { 200: 'The caller’s profile' },
      errors: ['error.not_found'],
    }),
    handler: async (request) => profileView(getProfile(requireCaller(request))),
  })

  app.route({
    method: 'PATCH',
    url: '/v1/profile',
    ...operation({
      operationId: 'updateProfile',
      summary: 'Set or clear the display name',
      description: 'An empty object is valid and returns the profile unchanged.',
      tags,
      auth: 'bearer',
      accepts: [...JSON_MEDIA, 'application/merge-patch+json'],
      body: UpdateProfileRequest,
      responses: { 200: ProfileResponse },
      described: { 200: 'The profile as it is now' },
      errors: ['error.not_found'],
    }),
    handler: async (request) => profileView(await updateProfile(deps, requireCaller(request), request.body)),
  })
}
