import Foundation

/// JPEG quantisation tables for tests: the base tables the encoders scale (Robidoux's, libjpeg's Annex K), libjpeg's
/// scaling by quality, and the tables a JPEG file carries (its DQT segments).
public enum JPEGTables {
    public static let robidoux = [16, 16, 16, 18, 25, 37, 56, 85, 16, 17, 20, 27, 34, 40, 53, 75,
                                   16, 20, 24, 31, 43, 62, 91, 135, 18, 27, 31, 40, 53, 74, 106, 156,
                                   25, 34, 43, 53, 69, 94, 131, 189, 37, 40, 62, 74, 94, 124, 169, 238,
                                   56, 53, 91, 106, 131, 169, 226, 311, 85, 75, 135, 156, 189, 238, 311, 418]
    public static let annexKLuma = [16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55,
                                     14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
                                     18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
                                     49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99]
    public static let annexKChroma = [17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99,
                                       24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99, 99, 99, 99]
        + [Int](repeating: 99, count: 32)
    /// The zigzag order DQT stores coefficients in: entry k of the segment is natural index `zigzag[k]`.
    public static let zigzag = [0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34,
                                 27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37,
                                 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63]

    /// libjpeg's scaling of a base table for IJG quality `q` (baseline: 1…255).
    public static func scaled(_ table: [Int], quality q: Int) -> [Int] {
        let scale = q < 50 ? 5000 / q : 200 - q * 2
        return table.map { min(255, max(1, ($0 * scale + 50) / 100)) }
    }

    /// The 8-bit quantisation tables of a JPEG's DQT segments, by table id, in natural order.
    public static func quantizationTables(_ data: Data) -> [Int: [Int]] {
        let bytes = [UInt8](data)
        var tables: [Int: [Int]] = [:]
        var i = 2
        while i + 4 <= bytes.count, bytes[i] == 0xFF {
            let marker = bytes[i + 1]
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            if marker == 0xDA { break }
            if marker == 0xDB {
                var j = i + 4
                while j < i + 2 + length {
                    let (precision, id) = (bytes[j] >> 4, Int(bytes[j] & 15))
                    guard precision == 0 else { return [:] } // 16-bit tables: not baseline
                    var natural = [Int](repeating: 0, count: 64)
                    for k in 0..<64 { natural[zigzag[k]] = Int(bytes[j + 1 + k]) }
                    tables[id] = natural
                    j += 65
                }
            }
            i += 2 + length
        }
        return tables
    }
}
