// backup --include / --exclude: a pattern with a "/" matches the whole path in the folder, one
// without matches the name at any depth; excludes win over includes.
import { describe, expect, it } from 'vitest'
import { filtered, PatternError, pathFilter } from './path-patterns.ts'

describe('pathFilter', () => {
  it('takes every file without patterns', () => {
    expect(pathFilter([], [])('a/b/c.jpg')).toBe(true)
  })

  it('matches a pattern without "/" against the name at any depth, and one with "/" against the whole path', () => {
    const movies = pathFilter(['*.mov'], [])
    expect([movies('clip.mov'), movies('2024/trip/clip.mov'), movies('2024/trip/photo.jpg')]).toEqual([true, true, false])
    const trip = pathFilter(['2024/**'], [])
    expect([trip('2024/trip/photo.jpg'), trip('2023/2024/photo.jpg'), trip('photo.jpg')]).toEqual([true, false, false])
    const anchored = pathFilter(['/top.jpg'], [])
    expect([anchored('top.jpg'), anchored('sub/top.jpg')]).toEqual([true, false])
  })

  it('keeps what matches an include and no exclude', () => {
    const keep = pathFilter(['2024/**', '*.heic'], ['*.mov', 'Trash/**'])
    expect(['2024/a.jpg', '2024/b.mov', 'old/c.heic', 'Trash/d.heic', 'old/e.jpg'].filter(keep)).toEqual(['2024/a.jpg', 'old/c.heic'])
  })

  it('refuses an empty pattern', () => {
    expect(() => pathFilter([''], [])).toThrow(PatternError)
  })

  it('filters a walk', async () => {
    const kept: string[] = []
    for await (const file of filtered([{ path: 'a.jpg' }, { path: 'b.mov' }], pathFilter([], ['*.mov']))) kept.push(file.path)
    expect(kept).toEqual(['a.jpg'])
  })
})
