// A small least-recently-used map: what the gallery keeps of decrypted thumbnails and opened
// assets is bounded by count, and whatever falls out is handed to `evicted` (an object URL is
// revoked there).
export class Lru<K, V> {
  readonly #items = new Map<K, V>()
  readonly #limit: number
  readonly #evicted: (value: V, key: K) => void

  constructor(limit: number, evicted: (value: V, key: K) => void = () => {}) {
    this.#limit = limit
    this.#evicted = evicted
  }

  get(key: K): V | undefined {
    const value = this.#items.get(key)
    if (value !== undefined) {
      // Map keeps insertion order: re-inserting makes it the most recent.
      this.#items.delete(key)
      this.#items.set(key, value)
    }
    return value
  }

  set(key: K, value: V): void {
    const old = this.#items.get(key)
    this.#items.delete(key)
    if (old !== undefined && old !== value) this.#evicted(old, key)
    this.#items.set(key, value)
    while (this.#items.size > this.#limit) {
      const [oldestKey, oldest] = this.#items.entries().next().value as [K, V]
      this.#items.delete(oldestKey)
      this.#evicted(oldest, oldestKey)
    }
  }

  delete(key: K): void {
    const value = this.#items.get(key)
    if (value === undefined) return
    this.#items.delete(key)
    this.#evicted(value, key)
  }

  clear(): void {
    for (const [key, value] of this.#items) this.#evicted(value, key)
    this.#items.clear()
  }
}
