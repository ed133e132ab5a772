// The photos the search tests look for (coffer-photos search: test/client/photos-search.test.ts;
// the web app's Search screen: test/browser/search.test.ts): in two albums, each with a known
// date taken, camera and (for some) position, and a video dated by its modification time.

/** The photos, by album folder: each one's name, date taken (UTC, at offset 0), camera and position. */
export const ICELAND = [
  {
    name: 'harbour-dawn.jpg',
    taken: Date.UTC(2019, 6, 14, 8, 30),
    camera: { make: 'Canon', model: 'Canon EOS 5D Mark IV' },
    gps: { latitude: 64.1466, longitude: -21.9426 },
  },
  {
    name: 'glacier-walk.jpg',
    taken: Date.UTC(2019, 6, 16, 13, 0),
    camera: { make: 'FUJIFILM', model: 'X-T3' },
    gps: { latitude: 63.4186, longitude: -19.006 },
  },
]
export const FAMILY = [
  {
    name: 'birthday-cake.jpg',
    taken: Date.UTC(2018, 2, 10, 17, 45),
    camera: { make: 'Apple', model: 'iPhone 12' },
    gps: { latitude: 48.8584, longitude: 2.2945 },
  },
  { name: 'garden.jpg', taken: Date.UTC(2020, 5, 1, 11, 0), camera: { make: 'NIKON CORPORATION', model: 'NIKON D750' } },
  { name: 'old-scan.jpg', taken: Date.UTC(2017, 11, 24, 20, 0), camera: { make: 'Coffer', model: 'Scanner' } },
]
/** A video: no EXIF; its date is its modification time. */
export const VIDEO = { name: 'puffins.mp4', taken: Date.UTC(2019, 6, 15, 9, 0) }
