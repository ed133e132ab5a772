// Relay mailboxes: the payloads an enrollment's two devices post to each other.
// Part of the storage port (../port.ts); storage/kysely/relay-mailbox.ts implements it.

/**
 * The relay's mailbox writes (decisions 0025 and 0036): each is one atomic write of its own,
 * never part of a transaction, and does not wait for the disk. A crash of the machine may lose
 * the last moments' posts or drains, which the devices then post or drain again.
 */
export interface RelayMailboxes {
  /**
   * Appends a payload to one mailbox of a live channel, in arrival order. Racing appends to one
   * channel are serialized on the channel row, so the mailbox bound is exact.
   */
  appendToMailbox(
    channelHash: string,
    direction: RelayDirection,
    payload: string,
    now: number,
    maxPayloads: number,
  ): Promise<'appended' | 'no_channel' | 'full'>
  /** Removes and returns one mailbox's payloads in arrival order; each payload goes to exactly one drain. Undefined when the channel is not live. */
  drainMailbox(channelHash: string, direction: RelayDirection, now: number): Promise<string[] | undefined>
}

export type RelayDirection = 'to_initiator' | 'to_enrollee'
