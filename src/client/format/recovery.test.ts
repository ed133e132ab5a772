// A recovery phrase is typed back by a person: it reads back whatever the case and spacing, and
// a wrong phrase is refused saying what is wrong before any escrow is tried with it.
import { describe, expect, it } from 'vitest'
import { ClientFormatError } from './errors.ts'
import { generateRecoveryKey, recoveryKeyFromPhrase, recoveryPhrase } from './recovery.ts'

function refusal(phrase: string): string {
  try {
    recoveryKeyFromPhrase(phrase)
  } catch (error) {
    expect(error).toBeInstanceOf(ClientFormatError)
    expect((error as ClientFormatError).code).toBe('malformed')
    return (error as Error).message
  }
  throw new Error('the phrase was accepted')
}

describe('recovery phrase', () => {
  // A fixed key: a changed phrase passes BIP-39's 8-bit checksum once in 256, so the cases below are pinned, not drawn.
  const key = Uint8Array.from({ length: 32 }, (_, i) => (i * 37 + 11) & 0xff)
  const phrase = recoveryPhrase(key)
  const words = phrase.split(' ')

  it('is 24 words that spell the key back, whatever the case and spacing', () => {
    expect(words).toHaveLength(24)
    expect(recoveryKeyFromPhrase(phrase)).toEqual(key)
    expect(recoveryKeyFromPhrase(`  ${words.slice(0, 12).join('  ').toUpperCase()}\n${words.slice(12).join('\t')}\n`)).toEqual(key)
  })

  it('is made from 32 fresh random bytes', () => {
    const made = generateRecoveryKey()
    expect(made).toHaveLength(32)
    expect(made).not.toEqual(generateRecoveryKey())
  })

  it('refuses a phrase of another length', () => {
    expect(refusal(words.slice(0, 12).join(' '))).toMatch(/expected 24 words, got 12/)
  })

  it('refuses a word that is not in the list, naming it', () => {
    expect(refusal([...words.slice(0, 4), 'coffer', ...words.slice(5)].join(' '))).toMatch(/word 5 \("coffer"\)/)
  })

  it('refuses two words swapped: the checksum fails', () => {
    const at = words.findIndex((word, i) => i > 0 && word !== words[0])
    const swapped = words.slice()
    ;[swapped[0], swapped[at]] = [swapped[at]!, swapped[0]!]
    expect(refusal(swapped.join(' '))).toMatch(/checksum/)
  })
})
