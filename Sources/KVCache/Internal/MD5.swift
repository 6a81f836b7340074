/// MD5 (RFC 1321), used only to turn cache keys into file names and remote-tier keys: not for security.
///
/// Written in Swift so the module needs no OpenSSL. The rounds are unrolled and the message is read in
/// place (a short key costs no allocation but its result): it runs on every disk and shared-tier lookup.
/// Thread-safe (a pure function). Package-visible: `WebImage` fingerprints `Vary`'s request values with it.
package enum MD5 {
    /// The 16-byte digest of `bytes`.
    static func digest<Bytes: Collection>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        let state = words(of: bytes)
        var out: [UInt8] = []
        out.reserveCapacity(16)
        for word in [state.0, state.1, state.2, state.3] {
            for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: word >> (8 * UInt32(i)))) }
        }
        return out
    }

    /// The digest of the UTF-8 bytes of `string`, as 32 lowercase hex digits.
    package static func hex(_ string: String) -> String {
        String(unsafeUninitializedCapacity: 32) { buffer in
            writeHex(of: string, into: UnsafeMutableRawBufferPointer(buffer))
            return 32
        }
    }

    /// Writes the digest of the UTF-8 bytes of `string` as 32 lowercase hex digits at the start of `buffer`
    /// (which must hold at least 32 bytes).
    static func writeHex(of string: String, into buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count >= 32)
        let state = words(of: string.utf8)
        put(state.0, at: 0, in: buffer)
        put(state.1, at: 8, in: buffer)
        put(state.2, at: 16, in: buffer)
        put(state.3, at: 24, in: buffer)
    }

    /// The four bytes of `word`, low byte first, as 8 hex digits at `offset`.
    @inline(__always)
    private static func put(_ word: UInt32, at offset: Int, in buffer: UnsafeMutableRawBufferPointer) {
        for n in 0..<4 {
            let byte = UInt8(truncatingIfNeeded: word >> (8 * UInt32(n)))
            buffer[offset + 2 * n] = hexDigit(byte >> 4)
            buffer[offset + 2 * n + 1] = hexDigit(byte & 0x0F)
        }
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x57 + nibble }

    /// The digest as its four state words (a, b, c, d), read from contiguous storage when the collection has it.
    private static func words<Bytes: Collection>(of bytes: Bytes) -> (UInt32, UInt32, UInt32, UInt32)
    where Bytes.Element == UInt8 {
        if let state = bytes.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) { return state }
        return Array(bytes).withUnsafeBytes { hash($0) }
    }

    /// Hashes `message`: its whole 64-byte blocks in place, then the padded tail from a stack buffer.
    private static func hash(_ message: UnsafeRawBufferPointer) -> (UInt32, UInt32, UInt32, UInt32) {
        var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476)
        let whole = message.count / 64 * 64
        var offset = 0
        while offset < whole {
            block(UnsafeRawBufferPointer(rebasing: message[offset..<offset + 64]), &state)
            offset += 64
        }
        // The tail, 0x80, zeros to 56 mod 64, the bit length (little-endian): one or two blocks.
        withUnsafeTemporaryAllocation(byteCount: 128, alignment: 8) { tail in
            tail.initializeMemory(as: UInt8.self, repeating: 0)
            let rest = message.count - whole
            if rest > 0 { tail.copyMemory(from: UnsafeRawBufferPointer(rebasing: message[whole...])) }
            tail[rest] = 0x80
            let length = rest < 56 ? 64 : 128
            let bits = UInt64(truncatingIfNeeded: message.count) &* 8
            tail.storeBytes(of: bits.littleEndian, toByteOffset: length - 8, as: UInt64.self)
            block(UnsafeRawBufferPointer(rebasing: tail[0..<64]), &state)
            if length == 128 { block(UnsafeRawBufferPointer(rebasing: tail[64..<128]), &state) }
        }
        return state
    }

    @inline(__always)
    private static func rotate(_ x: UInt32, _ s: UInt32) -> UInt32 { (x << s) | (x >> (32 - s)) }

    @inline(__always)
    private static func f(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ m: UInt32, _ k: UInt32, _ s: UInt32) -> UInt32 {
        b &+ rotate(a &+ ((b & c) | (~b & d)) &+ m &+ k, s)
    }

    @inline(__always)
    private static func g(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ m: UInt32, _ k: UInt32, _ s: UInt32) -> UInt32 {
        b &+ rotate(a &+ ((d & b) | (~d & c)) &+ m &+ k, s)
    }

    @inline(__always)
    private static func h(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ m: UInt32, _ k: UInt32, _ s: UInt32) -> UInt32 {
        b &+ rotate(a &+ (b ^ c ^ d) &+ m &+ k, s)
    }

    @inline(__always)
    private static func i(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ m: UInt32, _ k: UInt32, _ s: UInt32) -> UInt32 {
        b &+ rotate(a &+ (c ^ (b | ~d)) &+ m &+ k, s)
    }

    /// One 64-byte block of the compression function (the 64 steps of RFC 1321, unrolled).
    private static func block(_ p: UnsafeRawBufferPointer, _ state: inout (UInt32, UInt32, UInt32, UInt32)) {
        @inline(__always) func word(_ n: Int) -> UInt32 {
            UInt32(littleEndian: p.loadUnaligned(fromByteOffset: n * 4, as: UInt32.self))
        }
        let m0 = word(0), m1 = word(1), m2 = word(2), m3 = word(3), m4 = word(4), m5 = word(5), m6 = word(6)
        let m7 = word(7), m8 = word(8), m9 = word(9), m10 = word(10), m11 = word(11), m12 = word(12)
        let m13 = word(13), m14 = word(14), m15 = word(15)
        var a = state.0, b = state.1, c = state.2, d = state.3
        a = f(a, b, c, d, m0, 0xd76aa478, 7)
        d = f(d, a, b, c, m1, 0xe8c7b756, 12)
        c = f(c, d, a, b, m2, 0x242070db, 17)
        b = f(b, c, d, a, m3, 0xc1bdceee, 22)
        a = f(a, b, c, d, m4, 0xf57c0faf, 7)
        d = f(d, a, b, c, m5, 0x4787c62a, 12)
        c = f(c, d, a, b, m6, 0xa8304613, 17)
        b = f(b, c, d, a, m7, 0xfd469501, 22)
        a = f(a, b, c, d, m8, 0x698098d8, 7)
        d = f(d, a, b, c, m9, 0x8b44f7af, 12)
        c = f(c, d, a, b, m10, 0xffff5bb1, 17)
        b = f(b, c, d, a, m11, 0x895cd7be, 22)
        a = f(a, b, c, d, m12, 0x6b901122, 7)
        d = f(d, a, b, c, m13, 0xfd987193, 12)
        c = f(c, d, a, b, m14, 0xa679438e, 17)
        b = f(b, c, d, a, m15, 0x49b40821, 22)
        a = g(a, b, c, d, m1, 0xf61e2562, 5)
        d = g(d, a, b, c, m6, 0xc040b340, 9)
        c = g(c, d, a, b, m11, 0x265e5a51, 14)
        b = g(b, c, d, a, m0, 0xe9b6c7aa, 20)
        a = g(a, b, c, d, m5, 0xd62f105d, 5)
        d = g(d, a, b, c, m10, 0x02441453, 9)
        c = g(c, d, a, b, m15, 0xd8a1e681, 14)
        b = g(b, c, d, a, m4, 0xe7d3fbc8, 20)
        a = g(a, b, c, d, m9, 0x21e1cde6, 5)
        d = g(d, a, b, c, m14, 0xc33707d6, 9)
        c = g(c, d, a, b, m3, 0xf4d50d87, 14)
        b = g(b, c, d, a, m8, 0x455a14ed, 20)
        a = g(a, b, c, d, m13, 0xa9e3e905, 5)
        d = g(d, a, b, c, m2, 0xfcefa3f8, 9)
        c = g(c, d, a, b, m7, 0x676f02d9, 14)
        b = g(b, c, d, a, m12, 0x8d2a4c8a, 20)
        a = h(a, b, c, d, m5, 0xfffa3942, 4)
        d = h(d, a, b, c, m8, 0x8771f681, 11)
        c = h(c, d, a, b, m11, 0x6d9d6122, 16)
        b = h(b, c, d, a, m14, 0xfde5380c, 23)
        a = h(a, b, c, d, m1, 0xa4beea44, 4)
        d = h(d, a, b, c, m4, 0x4bdecfa9, 11)
        c = h(c, d, a, b, m7, 0xf6bb4b60, 16)
        b = h(b, c, d, a, m10, 0xbebfbc70, 23)
        a = h(a, b, c, d, m13, 0x289b7ec6, 4)
        d = h(d, a, b, c, m0, 0xeaa127fa, 11)
        c = h(c, d, a, b, m3, 0xd4ef3085, 16)
        b = h(b, c, d, a, m6, 0x04881d05, 23)
        a = h(a, b, c, d, m9, 0xd9d4d039, 4)
        d = h(d, a, b, c, m12, 0xe6db99e5, 11)
        c = h(c, d, a, b, m15, 0x1fa27cf8, 16)
        b = h(b, c, d, a, m2, 0xc4ac5665, 23)
        a = i(a, b, c, d, m0, 0xf4292244, 6)
        d = i(d, a, b, c, m7, 0x432aff97, 10)
        c = i(c, d, a, b, m14, 0xab9423a7, 15)
        b = i(b, c, d, a, m5, 0xfc93a039, 21)
        a = i(a, b, c, d, m12, 0x655b59c3, 6)
        d = i(d, a, b, c, m3, 0x8f0ccc92, 10)
        c = i(c, d, a, b, m10, 0xffeff47d, 15)
        b = i(b, c, d, a, m1, 0x85845dd1, 21)
        a = i(a, b, c, d, m8, 0x6fa87e4f, 6)
        d = i(d, a, b, c, m15, 0xfe2ce6e0, 10)
        c = i(c, d, a, b, m6, 0xa3014314, 15)
        b = i(b, c, d, a, m13, 0x4e0811a1, 21)
        a = i(a, b, c, d, m4, 0xf7537e82, 6)
        d = i(d, a, b, c, m11, 0xbd3af235, 10)
        c = i(c, d, a, b, m2, 0x2ad7d2bb, 15)
        b = i(b, c, d, a, m9, 0xeb86d391, 21)
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
    }
}
