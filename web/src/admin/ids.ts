// Account and asset ids are UUIDs (API.md): checked here so that a typo gets a sentence, not a 400.
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const ID_EXAMPLE = '3f0b0f46-4a4a-4c4c-8d8d-123456789abc'
