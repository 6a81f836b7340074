/// Reads the orientation tag (0x0112) from an EXIF payload (the TIFF structure after `Exif\0\0`).
///
/// Every offset is bounds-checked: a hostile payload gives `nil`, never a trap.
enum JPEGEXIF {
    /// The orientation value stored in IFD0 (any number, as stored), or `nil` when absent.
    ///
    /// Like exiftool, an IFD whose entry table does not fit in the payload is ignored as a whole.
    static func storedOrientation(in payload: UnsafeRawBufferPointer) -> Int? {
        let count = payload.count
        guard count >= 8 else { return nil }
        let littleEndian: Bool
        switch (payload[0], payload[1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        func u16(_ o: Int) -> Int? {
            guard o >= 0, o + 2 <= count else { return nil }
            let a = Int(payload[o]), b = Int(payload[o + 1])
            return littleEndian ? a | b << 8 : a << 8 | b
        }
        func u32(_ o: Int) -> Int? {
            guard let lo = u16(littleEndian ? o : o + 2), let hi = u16(littleEndian ? o + 2 : o) else { return nil }
            return hi << 16 | lo
        }
        guard u16(2) == 42, let ifd = u32(4), let entries = u16(ifd),
              ifd + 2 + entries * 12 <= count else { return nil }
        for i in 0..<entries {
            let entry = ifd + 2 + i * 12
            guard let tag = u16(entry) else { return nil }
            guard tag == 0x0112 else { continue }
            guard let type = u16(entry + 2) else { return nil }
            let value: Int?
            switch type {
            case 3: value = u16(entry + 8)           // SHORT, stored in the first two value bytes
            case 4: value = u32(entry + 8)           // LONG (seen in the wild)
            default: value = nil
            }
            return value
        }
        return nil
    }
}
