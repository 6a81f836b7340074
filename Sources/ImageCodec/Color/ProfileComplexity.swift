import Foundation

/// Bounds on the work a profile's lookup tables can make Little CMS do when it builds a transform, checked on the
/// profile's own tag table before lcms parses it, so creating a transform is bounded in time, not only in bytes.
///
/// Measured (lcms 2.14, this machine, `cmsCreateTransform` to sRGB, 8-bit, relative + BPC): an RGB CLUT of 17³ grid
/// points 17 ms, 33³ 41 ms, 65³ 54 ms, 85³ 117 ms; a CMYK CLUT of 17⁴ 96 ms, 21⁴ 90 ms; but a `D2B0`/`D2B1`
/// multi-process-element chain costs about 1.1 ms per element (10: 29 ms, 100: 140 ms, 1,000: 1.1 s, 10,000 — a
/// 1.3 MB profile — 13.8 s), and a segmented curve about 18 µs per segment (10,000 segments: 184 ms). The 4 MiB
/// profile cap alone bounds none of these well, so a profile over any of the limits below is ignored like any
/// other unusable profile (the image decodes as untagged).
///
/// - Important: Stateless and thread-safe; O(tags + elements), reads only the bytes given.
enum ProfileComplexity {
    /// Most grid points in one colour lookup table (the product over its inputs): 2^19 (an 80³ RGB grid, a 26⁴
    /// CMYK one; 85³ cost 117 ms).
    static let maxGridPoints = 1 << 19
    /// Most processing elements in one multi-process-element (`mpet`) tag: 16 (real profiles have a handful).
    static let maxElements = 16
    /// Most segments in one segmented curve (`curf`) of an `mpet` curve set: 1,024 (about 25 ms).
    static let maxSegments = 1024

    /// Why `profile` is over a limit, or `nil` when it is within them (or its tag table is one lcms will refuse
    /// anyway: such tags are skipped here).
    static func excess(_ profile: Data) -> String? {
        let bytes = [UInt8](profile)
        guard bytes.count >= 132 else { return nil }
        let tagCount = Int(u32(bytes, 128) ?? 0)
        guard tagCount <= (bytes.count - 132) / 12 else { return nil }
        for index in 0..<tagCount {
            let entry = 132 + index * 12
            guard let offset = u32(bytes, entry + 4).map(Int.init), let size = u32(bytes, entry + 8).map(Int.init),
                  offset <= bytes.count, size <= bytes.count - offset, size >= 12 else { continue }
            if let reason = excess(tag: Array(bytes[offset..<offset + size])) { return reason }
        }
        return nil
    }

    /// The check of one tag (`mft1`, `mft2`, `mAB `, `mBA `, `mpet`; others have no table).
    private static func excess(tag bytes: [UInt8]) -> String? {
        switch fourCC(bytes, 0) {
        case "mft1", "mft2":
            guard bytes.count >= 11 else { return nil }
            return gridExcess(inputs: Int(bytes[8]), points: Array(repeating: Int(bytes[10]), count: Int(bytes[8])))
        case "mAB ", "mBA ":
            guard bytes.count >= 32, let clut = u32(bytes, 24).map(Int.init), clut > 0, clut <= bytes.count - 16 else { return nil }
            let inputs = Int(bytes[8])
            return gridExcess(inputs: inputs, points: bytes[clut..<clut + min(inputs, 16)].map(Int.init))
        case "mpet":
            guard let count = u32(bytes, 12).map(Int.init) else { return nil }
            if count > maxElements { return "a chain of \(count) processing elements (limit \(maxElements))" }
            for element in 0..<count {
                guard let offset = u32(bytes, 16 + element * 8).map(Int.init), offset <= bytes.count - 12 else { continue }
                if let reason = elementExcess(bytes, at: offset) { return reason }
            }
            return nil
        default:
            return nil
        }
    }

    /// One `mpet` element: a `clut` grid, or a `cvst` curve set's segment counts.
    private static func elementExcess(_ bytes: [UInt8], at offset: Int) -> String? {
        let inputs = Int(u16(bytes, offset + 8) ?? 0)
        switch fourCC(bytes, offset) {
        case "clut":
            guard offset + 12 + 16 <= bytes.count else { return nil }
            return gridExcess(inputs: inputs, points: bytes[(offset + 12)..<(offset + 12 + min(inputs, 16))].map(Int.init))
        case "cvst":
            for curve in 0..<min(inputs, 16) {
                guard let position = u32(bytes, offset + 12 + curve * 8).map(Int.init) else { continue }
                let start = offset + position
                guard start <= bytes.count - 12, fourCC(bytes, start) == "curf", let segments = u16(bytes, start + 8) else { continue }
                if Int(segments) > maxSegments { return "a curve of \(segments) segments (limit \(maxSegments))" }
            }
            return nil
        default:
            return nil
        }
    }

    private static func gridExcess(inputs: Int, points: [Int]) -> String? {
        var total = 1
        for p in points.prefix(inputs) {
            total *= max(p, 1)
            if total > maxGridPoints {
                return "a lookup table of \(points.prefix(inputs).map(String.init).joined(separator: "×")) grid points (limit \(maxGridPoints))"
            }
        }
        return nil
    }

    private static func u32(_ b: [UInt8], _ i: Int) -> UInt32? {
        guard i >= 0, i + 4 <= b.count else { return nil }
        return UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }

    private static func u16(_ b: [UInt8], _ i: Int) -> UInt16? {
        guard i >= 0, i + 2 <= b.count else { return nil }
        return UInt16(b[i]) << 8 | UInt16(b[i + 1])
    }

    private static func fourCC(_ b: [UInt8], _ i: Int) -> String {
        guard i >= 0, i + 4 <= b.count else { return "" }
        return String(decoding: b[i..<i + 4], as: UTF8.self)
    }
}
