// Values of the wire contract that clients read at run time, kept apart from the schemas so that
// a client reaching for one (the SDK's batch size, coffer-photos checking its config files) does
// not load TypeBox with them.

/** Most hashes one batch download may ask for (docs/decisions/0029-blob-batches.md). */
export const BLOB_BATCH_MAX_HASHES = 100

/** A canonical UUID: lowercase, hyphenated. */
export const UUID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
