// The one error the client format throws: a code a program can switch on, and a message that
// says what was wrong with the bytes (docs/client-format.md, "Errors").

export type FormatErrorCode =
  /** The bytes are not a v1 structure: wrong version, role, chunk size or length. */
  | 'malformed'
  /** The stream ends before its last chunk (dropped chunks, or cut at a chunk boundary). */
  | 'truncated'
  /** Bytes follow the last chunk (an appended chunk). */
  | 'trailing-data'
  /** A chunk, a wrapped key or a header fails to authenticate: a wrong key, flipped bits, chunks reordered or from another stream. */
  | 'authentication'
  /** Past a limit of the format (2^32 chunks), or an escrow asking argon2id for more than a reader accepts. */
  | 'limit'

export class ClientFormatError extends Error {
  override readonly name = 'ClientFormatError'
  readonly code: FormatErrorCode
  constructor(code: FormatErrorCode, message: string) {
    super(message)
    this.code = code
  }
}
