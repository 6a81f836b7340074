import Foundation

/// What a JPEG file carries besides its picture, read from its marker segments: whether a lossless re-encoding that
/// copies the file's segments and bytes (JPEG XL's JPEG recompression, whose reconstruction data gives the file back
/// bit for bit) would also copy metadata.
///
/// - Important: Stateless and thread-safe. One pass over the file (the entropy-coded data is skipped byte by byte to
///   its next marker), never past the data.
package enum JPEGMetadataSegments {
    /// Whether `data` holds anything but the picture and the segments that say how to decode it, anywhere in the
    /// file (segments may sit between the scans of a progressive JPEG): EXIF or XMP (APP1), an ICC profile (APP2), a
    /// comment (COM), any application segment but a plain JFIF header (APP0 of exactly its 16 bytes, without a
    /// thumbnail) and Adobe's colour transform (APP14 of exactly its 14 bytes), or any byte after the end of the
    /// image (a trailer or an appended file). Also `true` for data that does not read as a whole JPEG: a caller
    /// then treats it as one that does carry metadata.
    package static func carriesMetadata(_ data: Data) -> Bool {
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Bool in
            let n = bytes.count
            guard n >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return true }
            func matches(_ text: String, at offset: Int) -> Bool {
                let expected = Array(text.utf8)
                return offset + expected.count <= n && expected.indices.allSatisfy { bytes[offset + $0] == expected[$0] }
            }
            var i = 2
            while i < n {
                guard bytes[i] == 0xFF else { return true }
                // Fill bytes: any number of 0xFF before a marker.
                while i < n, bytes[i] == 0xFF { i += 1 }
                guard i < n else { return true }
                let marker = bytes[i]
                i += 1
                switch marker {
                case 0xD9: return i != n                        // the end of the image: nothing may follow it
                case 0xD0...0xD7, 0x01: continue                // no length
                case 0xD8, 0x00: return true                    // a second SOI or a stuffed zero here: not a JPEG
                default: break
                }
                guard i + 1 < n else { return true }
                let length = Int(bytes[i]) << 8 | Int(bytes[i + 1])
                guard length >= 2, i + length <= n else { return true }
                let body = i + 2
                switch marker {
                case 0xE0:
                    // JFIF 1.x: identifier, version, units, densities, then a thumbnail of 0 × 0.
                    guard length == 16, matches("JFIF\0", at: body), bytes[body + 12] == 0, bytes[body + 13] == 0 else { return true }
                case 0xEE:
                    // Adobe: identifier, version, two flag words, the colour transform.
                    guard length == 14, matches("Adobe", at: body) else { return true }
                case 0xE1...0xEF, 0xFE:
                    return true
                default:
                    break
                }
                i += length
                if marker == 0xDA {
                    // The scan's entropy-coded data runs to the next marker: 0xFF followed by anything but a stuffed
                    // zero or a restart marker.
                    while i < n {
                        if bytes[i] == 0xFF, i + 1 < n, bytes[i + 1] != 0x00, !(0xD0...0xD7).contains(bytes[i + 1]) { break }
                        i += 1
                    }
                }
            }
            return true                                         // no end of image
        }
    }
}
