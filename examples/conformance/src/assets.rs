//! Tiny binary payloads the fixture returns: real, decodable files, so
//! clients that render them do not choke.

/// A 1x1 grayscale PNG (68 bytes).
pub(crate) const PIXEL_PNG: [u8; 68] = [
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 4, 0,
    0, 0, 181, 28, 12, 2, 0, 0, 0, 11, 73, 68, 65, 84, 120, 218, 99, 100, 96, 0, 0, 0, 6, 0, 2, 48,
    129, 208, 47, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];

/// One millisecond of silence: an 8 kHz, mono, 8-bit PCM WAV (52 bytes).
pub(crate) const SILENCE_WAV: [u8; 52] = [
    82, 73, 70, 70, 44, 0, 0, 0, 87, 65, 86, 69, 102, 109, 116, 32, 16, 0, 0, 0, 1, 0, 1, 0, 64,
    31, 0, 0, 64, 31, 0, 0, 1, 0, 8, 0, 100, 97, 116, 97, 8, 0, 0, 0, 128, 128, 128, 128, 128, 128,
    128, 128,
];
