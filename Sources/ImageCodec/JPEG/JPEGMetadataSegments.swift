import Foundation

/// What a JPEG file carries besides its picture, read from its marker segments before the first scan: whether a
/// lossless re-encoding that copies the file's segments (JPEG XL's JPEG recompression) would also copy metadata.
///
/// - Important: Stateless and thread-safe. Reads only the segment headers before the first SOS (a few hundred
///   bytes for a camera JPEG), never past the data.
package enum JPEGMetadataSegments {
    /// Whether `data` holds anything but the picture and the segments that describe how to decode it: EXIF or XMP
    /// (APP1), an ICC profile (APP2), a comment (COM) or any application segment other than JFIF (APP0) and Adobe's
    /// colour transform (APP14). Also `true` for data that does not read as a JPEG up to its first scan: a caller
    /// then treats it as one that does carry metadata.
    package static func carriesMetadata(_ data: Data) -> Bool {
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Bool in
            let n = bytes.count
            guard n >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return true }
            var i = 2
            while i < n {
                guard bytes[i] == 0xFF else { return true }
                // Fill bytes: any number of 0xFF before a marker.
                while i < n, bytes[i] == 0xFF { i += 1 }
                guard i < n else { return true }
                let marker = bytes[i]
                i += 1
                switch marker {
                case 0xDA: return false                         // the first scan: every header segment was plain
                case 0xD0...0xD7, 0x01: continue                // no length
                case 0xD8, 0xD9, 0x00: return true              // a second SOI, EOI or a stuffed zero here: not plain
                default: break
                }
                guard i + 1 < n else { return true }
                let length = Int(bytes[i]) << 8 | Int(bytes[i + 1])
                guard length >= 2 else { return true }
                if marker == 0xFE || (0xE1...0xEF).contains(marker) && marker != 0xEE { return true }
                i += length
            }
            return true
        }
    }
}
